#include "sim/util/index_set.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

namespace clustersim {
namespace {

TEST(IndexSet, FindsElementsInOrderAcrossWordsAndLevels) {
  IndexSet set(10000);
  EXPECT_EQ(set.FindFirst(), -1);
  for (int i : {9999, 0, 63, 64, 4095, 4096}) set.Insert(i);
  EXPECT_EQ(set.count(), 6);
  std::vector<int> seen;
  for (int i = set.FindFirst(); i >= 0; i = set.FindFrom(i + 1)) seen.push_back(i);
  EXPECT_EQ(seen, (std::vector<int>{0, 63, 64, 4095, 4096, 9999}));
  set.Erase(0);
  set.Erase(63);
  EXPECT_EQ(set.FindFirst(), 64);
  EXPECT_EQ(set.FindFrom(4097), 9999);
  EXPECT_EQ(set.FindFrom(10000), -1);
}

TEST(IndexSet, MatchesAnOrderedSetUnderRandomOperations) {
  std::mt19937 rng(7);
  IndexSet set(5000);
  std::set<int> reference;
  for (int step = 0; step < 20000; ++step) {
    const int i = static_cast<int>(rng() % 5000);
    if (rng() % 2) {
      set.Insert(i);
      reference.insert(i);
    } else {
      set.Erase(i);
      reference.erase(i);
    }
    const int from = static_cast<int>(rng() % 5000);
    auto it = reference.lower_bound(from);
    ASSERT_EQ(set.FindFrom(from), it == reference.end() ? -1 : *it);
  }
  EXPECT_EQ(set.count(), static_cast<int>(reference.size()));
}

TEST(MaxTree, FindsTheLowestPositionWithAtLeastAValue) {
  MaxTree tree(7);
  const int values[7] = {1, 0, 3, 2, 4, 0, 3};
  for (int i = 0; i < 7; ++i) tree.Set(i, values[i]);
  EXPECT_EQ(tree.FindFirstAtLeast(1), 0);
  EXPECT_EQ(tree.FindFirstAtLeast(3), 2);
  EXPECT_EQ(tree.FindFirstAtLeast(4), 4);
  EXPECT_EQ(tree.FindFirstAtLeast(5), -1);
  EXPECT_EQ(tree.FindFirstAtLeast(3, 3), 4);
  EXPECT_EQ(tree.FindFirstAtLeast(3, 5), 6);
  tree.Set(4, 0);
  EXPECT_EQ(tree.FindFirstAtLeast(4), -1);
  EXPECT_EQ(tree.FindFirstAtLeast(2, 3), 3);
}

}  // namespace
}  // namespace clustersim

namespace clustersim {
namespace {

TEST(MaxTree, MatchesALinearScanUnderRandomOperations) {
  std::mt19937 rng(11);
  for (int size : {1, 2, 3, 7, 64, 1000}) {
    MaxTree tree(size);
    std::vector<int> values(size, 0);
    for (int step = 0; step < 5000; ++step) {
      const int pos = static_cast<int>(rng() % size);
      values[pos] = static_cast<int>(rng() % 9);
      tree.Set(pos, values[pos]);
      const int v = 1 + static_cast<int>(rng() % 8);
      const int from = static_cast<int>(rng() % size);
      int expected = -1;
      for (int i = from; i < size && expected < 0; ++i) {
        if (values[i] >= v) expected = i;
      }
      ASSERT_EQ(tree.FindFirstAtLeast(v, from), expected) << "size " << size;
    }
  }
}

}  // namespace
}  // namespace clustersim
