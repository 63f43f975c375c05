#include "policies/availability_profile.h"

#include <algorithm>
#include <cmath>

#include "sim/util/error.h"

namespace clustersim {

// ---- AvailabilityProfile ----

AvailabilityProfile::AvailabilityProfile(int total) : root_(NewNode(-kInfinity, total)) {}

void AvailabilityProfile::Trim(double now) {
  EnsureKey(now);
  int before = -1;
  Split(root_, now, &before, &root_);
  Release(before);
}

void AvailabilityProfile::Add(double start, double end, int delta) {
  if (!(start < end)) return;
  EnsureKey(start);
  EnsureKey(end);
  int left = -1, middle = -1, right = -1;
  Split(root_, start, &left, &middle);
  Split(middle, end, &middle, &right);
  Apply(middle, delta);
  root_ = Merge(Merge(left, middle), right);
  MergeIfEqualToPrevious(end);
  MergeIfEqualToPrevious(start);
}

double AvailabilityProfile::EarliestSlot(int amount, double seconds, double not_before,
                                         double limit) const {
  auto at_least = [amount](int /*lo*/, int hi) { return hi >= amount; };
  auto below = [amount](int lo, int /*hi*/) { return lo < amount; };
  double start = not_before;
  if (ValueAt(start) < amount) {
    const int next = FirstAfter(root_, start, at_least);
    if (next < 0) return kInfinity;
    start = nodes_[next].key;
  }
  while (start <= limit) {
    // The free amount is >= amount at `start`; find where it next drops below.
    const int short_of = FirstAfter(root_, start, below);
    if (short_of < 0 || nodes_[short_of].key >= start + seconds) return start;
    const int next = FirstAfter(root_, nodes_[short_of].key, at_least);
    if (next < 0) return kInfinity;
    start = nodes_[next].key;
  }
  return kInfinity;
}

int AvailabilityProfile::MinOver(double start, double end) const {
  int least = ValueAt(start);
  if (!(end > start)) return least;
  // Keys in (start, end): descend to the first node inside, then take the part of its left
  // subtree after `start` and of its right subtree before `end`. A node's value, lo and hi lack
  // the lazy adds of its ancestors, summed on the way down.
  int add = 0;
  for (int n = root_; n >= 0;) {
    const Node& node = nodes_[n];
    if (node.key <= start || node.key >= end) {
      add += node.lazy;
      n = node.key <= start ? node.right : node.left;
      continue;
    }
    least = std::min(least, node.value + add);
    const int below = add + node.lazy;
    for (int m = node.left, a = below; m >= 0;) {
      const Node& x = nodes_[m];
      if (x.key > start) {
        least = std::min(least, x.value + a);
        if (x.right >= 0) least = std::min(least, nodes_[x.right].lo + a + x.lazy);
      }
      a += x.lazy;
      m = x.key > start ? x.left : x.right;
    }
    for (int m = node.right, a = below; m >= 0;) {
      const Node& x = nodes_[m];
      if (x.key < end) {
        least = std::min(least, x.value + a);
        if (x.left >= 0) least = std::min(least, nodes_[x.left].lo + a + x.lazy);
      }
      a += x.lazy;
      m = x.key < end ? x.right : x.left;
    }
    break;
  }
  return least;
}

double AvailabilityProfile::NextBreakpoint(double t) const {
  const int value = ValueAt(t);
  const int next =
      FirstAfter(root_, t, [value](int lo, int hi) { return lo != value || hi != value; });
  return next < 0 ? kInfinity : nodes_[next].key;
}

int AvailabilityProfile::ValueAt(double t) const {
  // Queries read lazy adds on the way down, never push.
  int value = 0;
  int add = 0;
  for (int n = root_; n >= 0;) {
    const Node& node = nodes_[n];
    if (node.key <= t) value = node.value + add;
    add += node.lazy;
    n = node.key <= t ? node.right : node.left;
  }
  return value;
}

double AvailabilityProfile::FirstKey() const {
  int n = root_;
  while (nodes_[n].left >= 0) n = nodes_[n].left;
  return nodes_[n].key;
}

int AvailabilityProfile::NewNode(double key, int value) {
  rng_ ^= rng_ << 13;  // xorshift64: deterministic priorities
  rng_ ^= rng_ >> 7;
  rng_ ^= rng_ << 17;
  Node node{key, value, 0, value, value, rng_};
  if (free_.empty()) {
    nodes_.push_back(node);
    return static_cast<int>(nodes_.size()) - 1;
  }
  const int index = free_.back();
  free_.pop_back();
  nodes_[index] = node;
  return index;
}

void AvailabilityProfile::Release(int n) {
  if (n < 0) return;
  Release(nodes_[n].left);
  Release(nodes_[n].right);
  free_.push_back(n);
}

void AvailabilityProfile::Apply(int n, int delta) {
  if (n < 0) return;
  Node& node = nodes_[n];
  node.value += delta;
  node.lazy += delta;
  node.lo += delta;
  node.hi += delta;
}

void AvailabilityProfile::Push(int n) {
  Node& node = nodes_[n];
  if (node.lazy == 0) return;
  Apply(node.left, node.lazy);
  Apply(node.right, node.lazy);
  node.lazy = 0;
}

void AvailabilityProfile::Pull(int n) {
  Node& node = nodes_[n];
  node.lo = node.hi = node.value;
  for (int child : {node.left, node.right}) {
    if (child < 0) continue;
    node.lo = std::min(node.lo, nodes_[child].lo);
    node.hi = std::max(node.hi, nodes_[child].hi);
  }
}

// Splits the subtree `n` into keys < key (*less) and keys >= key (*rest).
void AvailabilityProfile::Split(int n, double key, int* less, int* rest) {
  if (n < 0) {
    *less = *rest = -1;
    return;
  }
  Push(n);
  if (nodes_[n].key < key) {
    Split(nodes_[n].right, key, &nodes_[n].right, rest);
    *less = n;
  } else {
    Split(nodes_[n].left, key, less, &nodes_[n].left);
    *rest = n;
  }
  Pull(n);
}

// REQUIRES: every key of `a` < every key of `b`.
int AvailabilityProfile::Merge(int a, int b) {
  if (a < 0) return b;
  if (b < 0) return a;
  if (nodes_[a].priority > nodes_[b].priority) {
    Push(a);
    nodes_[a].right = Merge(nodes_[a].right, b);
    Pull(a);
    return a;
  }
  Push(b);
  nodes_[b].left = Merge(a, nodes_[b].left);
  Pull(b);
  return b;
}

// The node with the greatest key <= t (< t if strict), or -1.
int AvailabilityProfile::Floor(double t, bool strict) {
  int found = -1;
  for (int n = root_; n >= 0;) {
    Push(n);
    if (strict ? nodes_[n].key < t : nodes_[n].key <= t) {
      found = n;
      n = nodes_[n].right;
    } else {
      n = nodes_[n].left;
    }
  }
  return found;
}

void AvailabilityProfile::EnsureKey(double t) {
  const int floor = Floor(t, false);
  if (nodes_[floor].key == t) return;
  int less = -1, rest = -1;
  Split(root_, t, &less, &rest);
  root_ = Merge(Merge(less, NewNode(t, nodes_[floor].value)), rest);
}

void AvailabilityProfile::MergeIfEqualToPrevious(double t) {
  const int at = Floor(t, false);
  const int previous = Floor(t, true);
  if (at < 0 || previous < 0 || nodes_[at].key != t ||
      nodes_[at].value != nodes_[previous].value) {
    return;
  }
  int less = -1, rest = -1, key = -1;
  Split(root_, t, &less, &rest);
  Split(rest, std::nextafter(t, kInfinity), &key, &rest);
  Release(key);
  root_ = Merge(less, rest);
}

// The node with the lowest key > t whose value v satisfies may(v, v), where may(lo, hi) says
// whether a subtree with those bounds can hold one (exactly: it holds one iff may is true).
// `add`: the lazy adds of n's ancestors.
template <typename May>
int AvailabilityProfile::FirstAfter(int n, double t, const May& may, int add) const {
  if (n < 0 || !may(nodes_[n].lo + add, nodes_[n].hi + add)) return -1;
  const Node& node = nodes_[n];
  const int below = add + node.lazy;
  if (node.key > t) {
    const int left = FirstAfter(node.left, t, may, below);
    if (left >= 0) return left;
    if (may(node.value + add, node.value + add)) return n;
  }
  return FirstAfter(node.right, t, may, below);
}

// ---- GapIndex ----

namespace {

// A subtree whose longest gap is this much shorter than `seconds` cannot hold a gap with
// end >= start + seconds, whatever the rounding of both sides (times below 10^12 s).
bool MaybeLong(double max_length, double seconds) {
  return max_length * (1 + 1e-12) + 1e-3 >= seconds;
}

}  // namespace

GapIndex::GapIndex(int units, int capacity) : capacity_(capacity) {
  CHECK(capacity >= 1 && units >= 0, "GapIndex: needs a capacity of at least 1");
  trees_.resize(capacity);
  unit_gaps_.resize(static_cast<size_t>(units) * capacity);
  open_.resize(capacity + 1);
  for (int unit = 0; unit < units; ++unit) {
    for (int level = 1; level <= capacity; ++level) AddGap(unit, level, -kInfinity, kInfinity);
  }
}

void GapIndex::AddGap(int unit, int level, double start, double end) {
  unit_gaps_[Slot(unit, level)].emplace(start, end);
  trees_[level - 1].Insert(start, end, unit);
}

void GapIndex::EraseGap(int unit, int level, double start) {
  unit_gaps_[Slot(unit, level)].erase(start);
  trees_[level - 1].Erase(start, unit);
}

void GapIndex::Update(int unit, const AvailabilityProfile& profile, double start, double end) {
  // Every gap lies inside a level-1 gap, so the level-1 gaps touching [start, end] bound the
  // region whose gaps may change; outside it the profile did not change and stays below 1 at the
  // region's ends.
  double lo = start;
  double hi = end;
  ForEachGapOverlapping(unit, 1, std::nextafter(start, -kInfinity), std::nextafter(end, kInfinity),
                        [&](double a, double b) {
                          lo = std::min(lo, a);
                          hi = std::max(hi, b);
                        });
  old_gaps_.resize(capacity_ + 1);
  new_gaps_.resize(capacity_ + 1);
  for (int level = 1; level <= capacity_; ++level) {
    old_gaps_[level].clear();
    new_gaps_[level].clear();
    ForEachGapOverlapping(unit, level, std::nextafter(lo, -kInfinity),
                          std::nextafter(hi, kInfinity), [&](double a, double b) {
                            CHECK(a >= lo && b <= hi, "GapIndex: a gap crosses its region");
                            old_gaps_[level].emplace_back(a, b);
                          });
  }
  // The gaps the profile has in [lo, hi] now.
  const double from = std::max(lo, profile.FirstKey());
  int value = profile.ValueAt(from);
  for (int level = 1; level <= std::min(value, capacity_); ++level) open_[level] = from;
  bool closed = true;
  profile.ForEachKeyAfter(from, [&](double key, int next) {
    // A key at +infinity (a change to the end of time) ends nothing: runs open there last.
    if (key == kInfinity) return false;
    if (key > hi) {
      closed = value < 1;
      return false;
    }
    for (int level = std::max(value, 0) + 1; level <= std::min(next, capacity_); ++level) {
      open_[level] = key;
    }
    for (int level = std::max(next, 0) + 1; level <= std::min(value, capacity_); ++level) {
      new_gaps_[level].emplace_back(open_[level], key);
    }
    value = next;
    return true;
  });
  CHECK(closed, "GapIndex: a gap reaches past its region");
  CHECK(value < 1 || hi == kInfinity, "GapIndex: a gap reaches past its region");
  // Runs still open last to the end of time.
  for (int level = 1; level <= std::min(value, capacity_); ++level) {
    new_gaps_[level].emplace_back(open_[level], kInfinity);
  }
  // Only the gaps that changed are taken out of the index and put in (both lists ascending).
  for (int level = 1; level <= capacity_; ++level) {
    const auto& before = old_gaps_[level];
    const auto& after = new_gaps_[level];
    size_t i = 0, j = 0;
    while (i < before.size() || j < after.size()) {
      if (j == after.size() || (i < before.size() && before[i].first < after[j].first)) {
        EraseGap(unit, level, before[i++].first);
      } else if (i == before.size() || after[j].first < before[i].first) {
        AddGap(unit, level, after[j].first, after[j].second);
        ++j;
      } else {
        if (before[i].second != after[j].second) {
          EraseGap(unit, level, before[i].first);
          AddGap(unit, level, after[j].first, after[j].second);
        }
        ++i;
        ++j;
      }
    }
  }
}

void GapIndex::Trim(int unit, const AvailabilityProfile& profile, double now) {
  const double first = profile.FirstKey();
  for (int level = 1; level <= capacity_; ++level) {
    std::map<double, double>& gaps = unit_gaps_[Slot(unit, level)];
    while (!gaps.empty() && gaps.begin()->second <= now) EraseGap(unit, level, gaps.begin()->first);
    if (!gaps.empty() && gaps.begin()->first < first) {
      const double end = gaps.begin()->second;
      EraseGap(unit, level, gaps.begin()->first);
      AddGap(unit, level, first, end);
    }
  }
}

double GapIndex::Earliest(int level, double seconds, double from) const {
  return trees_[level - 1].Earliest(seconds, from);
}

void GapIndex::UnitsStartingAt(int level, double t, double seconds, std::vector<int>* out) const {
  trees_[level - 1].StartingAt(t, seconds, out);
}

// ---- GapIndex::Tree ----

void GapIndex::Tree::Pull(int n) {
  Node& node = nodes_[n];
  node.max_end = node.end;
  node.max_length = node.end - node.start;
  for (int child : {node.left, node.right}) {
    if (child < 0) continue;
    node.max_end = std::max(node.max_end, nodes_[child].max_end);
    node.max_length = std::max(node.max_length, nodes_[child].max_length);
  }
}

void GapIndex::Tree::Split(int n, double start, int unit, int* less, int* rest) {
  if (n < 0) {
    *less = *rest = -1;
    return;
  }
  const Node& node = nodes_[n];
  if (node.start < start || (node.start == start && node.unit < unit)) {
    Split(nodes_[n].right, start, unit, &nodes_[n].right, rest);
    *less = n;
  } else {
    Split(nodes_[n].left, start, unit, less, &nodes_[n].left);
    *rest = n;
  }
  Pull(n);
}

int GapIndex::Tree::Merge(int a, int b) {
  if (a < 0) return b;
  if (b < 0) return a;
  if (nodes_[a].priority > nodes_[b].priority) {
    nodes_[a].right = Merge(nodes_[a].right, b);
    Pull(a);
    return a;
  }
  nodes_[b].left = Merge(a, nodes_[b].left);
  Pull(b);
  return b;
}

void GapIndex::Tree::Insert(double start, double end, int unit) {
  rng_ ^= rng_ << 13;
  rng_ ^= rng_ >> 7;
  rng_ ^= rng_ << 17;
  const uint64_t priority = rng_;
  const double length = end - start;
  int index;
  if (free_.empty()) {
    index = static_cast<int>(nodes_.size());
    nodes_.emplace_back();
  } else {
    index = free_.back();
    free_.pop_back();
  }
  // The treap's shape is fixed by its keys and priorities (all distinct: xorshift64 repeats no
  // state within its period), so the gap goes where splitting the whole tree at its key and
  // merging would put it: down the search path while the nodes there rank above it, each of
  // which gets it in its subtree (their maxima can only grow), then above the rest of that
  // path, split by its key.
  int* link = &root_;
  while (*link >= 0 && nodes_[*link].priority > priority) {
    Node& above = nodes_[*link];
    above.max_end = std::max(above.max_end, end);
    above.max_length = std::max(above.max_length, length);
    link = (above.start < start || (above.start == start && above.unit < unit)) ? &above.right
                                                                                : &above.left;
  }
  int less = -1, rest = -1;
  Split(*link, start, unit, &less, &rest);
  nodes_[index] = Node{start, end, unit, priority, less, rest, end, length};
  Pull(index);
  *link = index;
}

void GapIndex::Tree::Erase(double start, int unit) {
  path_.clear();
  int* link = &root_;
  while (true) {
    CHECK(*link >= 0, "GapIndex: erased a gap that is not indexed");
    Node& node = nodes_[*link];
    if (node.start == start && node.unit == unit) break;
    path_.push_back(*link);
    link = (start < node.start || (start == node.start && unit < node.unit)) ? &node.left
                                                                             : &node.right;
  }
  const int gone = *link;
  free_.push_back(gone);
  *link = Merge(nodes_[gone].left, nodes_[gone].right);
  // The nodes above lost one gap from their subtrees; from the first whose maxima stay the same
  // up, nothing changes.
  for (auto it = path_.rbegin(); it != path_.rend(); ++it) {
    const Node& node = nodes_[*it];
    const double max_end = node.max_end;
    const double max_length = node.max_length;
    Pull(*it);
    if (node.max_end == max_end && node.max_length == max_length) break;
  }
}

double GapIndex::Tree::PrefixMaxEnd(double from) const {
  double best = -kInfinity;
  for (int n = root_; n >= 0;) {
    const Node& node = nodes_[n];
    if (node.start <= from) {
      best = std::max(best, node.end);
      if (node.left >= 0) best = std::max(best, nodes_[node.left].max_end);
      n = node.right;
    } else {
      n = node.left;
    }
  }
  return best;
}

int GapIndex::Tree::FirstLongAfter(int n, double from, double seconds) const {
  if (n < 0 || !MaybeLong(nodes_[n].max_length, seconds)) return -1;
  const Node& node = nodes_[n];
  if (node.start > from) {
    const int left = FirstLongAfter(node.left, from, seconds);
    if (left >= 0) return left;
    if (node.end >= node.start + seconds) return n;
  }
  return FirstLongAfter(node.right, from, seconds);
}

double GapIndex::Tree::Earliest(double seconds, double from) const {
  // A gap holding `from` with room from there on; else the first gap after `from` long enough
  // (starting later inside a gap that holds `from` leaves less room).
  const double end = PrefixMaxEnd(from);
  if (end > from && end >= from + seconds) return from;
  const int n = FirstLongAfter(root_, from, seconds);
  return n < 0 ? kInfinity : nodes_[n].start;
}

void GapIndex::Tree::Collect(int n, double t, double seconds, std::vector<int>* out) const {
  if (n < 0 || nodes_[n].max_end < t + seconds) return;
  const Node& node = nodes_[n];
  if (node.start < t) {
    Collect(node.right, t, seconds, out);
  } else if (node.start > t) {
    Collect(node.left, t, seconds, out);
  } else {
    Collect(node.left, t, seconds, out);
    if (node.end >= t + seconds && node.end > t) out->push_back(node.unit);
    Collect(node.right, t, seconds, out);
  }
}

void GapIndex::Tree::StartingAt(double t, double seconds, std::vector<int>* out) const {
  Collect(root_, t, seconds, out);
}

}  // namespace clustersim
