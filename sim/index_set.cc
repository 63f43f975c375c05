#include "sim/index_set.h"

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
  if (from >= size_ || tree_[1] < v) return -1;
  return Descend(1, 0, leaves_, v, from < 0 ? 0 : from);
}

int MaxTree::Descend(int index, int lo, int hi, int v, int from) const {
  if (hi <= from || tree_[index] < v) return -1;
  if (hi - lo == 1) return lo < size_ ? lo : -1;
  const int mid = (lo + hi) / 2;
  const int left = Descend(2 * index, lo, mid, v, from);
  if (left >= 0) return left;
  return Descend(2 * index + 1, mid, hi, v, from);
}

}  // namespace clustersim
