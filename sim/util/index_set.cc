#include "sim/util/index_set.h"

namespace clustersim {

IndexSet::IndexSet(int size) {
  int bits = size < 1 ? 1 : size;
  do {
    const int words = (bits + 63) / 64;
    levels_.emplace_back(words, 0);
    bits = words;
  } while (bits > 1);
}

void IndexSet::Insert(int i) {
  for (auto& level : levels_) {
    uint64_t& word = level[i >> 6];
    const bool was_empty = word == 0;
    const uint64_t bit = uint64_t{1} << (i & 63);
    if (&level == &levels_[0]) {
      if (word & bit) return;
      ++count_;
    }
    word |= bit;
    if (!was_empty) return;
    i >>= 6;
  }
}

void IndexSet::Erase(int i) {
  for (auto& level : levels_) {
    uint64_t& word = level[i >> 6];
    const uint64_t bit = uint64_t{1} << (i & 63);
    if (&level == &levels_[0]) {
      if (!(word & bit)) return;
      --count_;
    }
    word &= ~bit;
    if (word != 0) return;
    i >>= 6;
  }
}

int IndexSet::NextAtLevel(int level, int from) const {
  const auto& words = levels_[level];
  const int w = from >> 6;
  if (from < 0 || w >= static_cast<int>(words.size())) return -1;
  const uint64_t bits = words[w] & (~uint64_t{0} << (from & 63));
  if (bits != 0) return (w << 6) + __builtin_ctzll(bits);
  if (level + 1 == static_cast<int>(levels_.size())) return -1;
  const int next_word = NextAtLevel(level + 1, w + 1);
  if (next_word < 0) return -1;
  return (next_word << 6) + __builtin_ctzll(words[next_word]);
}

MaxTree::MaxTree(int size) : size_(size) {
  while (leaves_ < size) leaves_ <<= 1;
  tree_.assign(2 * leaves_, 0);
}

void MaxTree::Set(int position, int value) {
  int i = leaves_ + position;
  tree_[i] = value;
  for (i >>= 1; i >= 1; i >>= 1) {
    const int m = tree_[2 * i] > tree_[2 * i + 1] ? tree_[2 * i] : tree_[2 * i + 1];
    if (tree_[i] == m) break;
    tree_[i] = m;
  }
}

int MaxTree::FindFirstAtLeast(int v, int from) const {
  if (from < 0) from = 0;
  if (from >= size_ || tree_[1] < v) return -1;
  // From the leaf at `from`, climb until a right sibling holds a value >= v, then descend to its
  // leftmost such leaf. Iterative: this is on the placement hot path.
  int i = leaves_ + from;
  if (tree_[i] < v) {
    while (true) {
      while (i & 1) {
        if (i == 1) return -1;
        i >>= 1;
      }
      ++i;
      if (tree_[i] >= v) break;
    }
    while (i < leaves_) {
      i *= 2;
      if (tree_[i] < v) ++i;
    }
  }
  const int position = i - leaves_;
  return position < size_ ? position : -1;
}

}  // namespace clustersim
