// Small ordered-index structures for placement at scale (bench/README.md#targets: placement must
// not scan every node per job).
//
// IndexSet: a set of integers in [0, size) as a hierarchical bitmap; Insert, Erase, FindFirst and
// FindNext cost O(log64 size).
// MaxTree: a segment tree of non-negative values answering "the lowest position >= from whose
// value is >= v" in O(log size).
#ifndef CLUSTERSIM_SIM_UTIL_INDEX_SET_H_
#define CLUSTERSIM_SIM_UTIL_INDEX_SET_H_

#include <cstdint>
#include <vector>

namespace clustersim {

class IndexSet {
 public:
  explicit IndexSet(int size = 0);
  void Insert(int i);
  void Erase(int i);
  bool Contains(int i) const { return (levels_[0][i >> 6] >> (i & 63)) & 1; }
  bool empty() const { return count_ == 0; }
  int count() const { return count_; }
  // Returns the smallest element >= from, or -1.
  int FindFrom(int from) const { return NextAtLevel(0, from); }
  int FindFirst() const { return FindFrom(0); }

 private:
  int NextAtLevel(int level, int from) const;
  std::vector<std::vector<uint64_t>> levels_;  // levels_[0] holds one bit per element
  int count_ = 0;
};

class MaxTree {
 public:
  explicit MaxTree(int size = 0);
  void Set(int position, int value);
  int Get(int position) const { return tree_[leaves_ + position]; }
  // Returns the lowest position >= from with value >= v, or -1.
  int FindFirstAtLeast(int v, int from = 0) const;

 private:
  int leaves_ = 1;
  int size_ = 0;
  std::vector<int> tree_;
};

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_UTIL_INDEX_SET_H_
