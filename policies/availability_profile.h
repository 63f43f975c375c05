// Availability over time for planning policies (policies/conservative.cc; docs/backfilling.md):
// how much of a unit's capacity is free from now into the future, given the running jobs (until
// their estimated ends) and the reservations.
//
// AvailabilityProfile: the free amount of one unit (a node's GPUs, or a GPU type's when a policy
// counts GPUs) as a step function of time: key t with value v = v free from t until the next key.
// The first key is at or before the current time, the last holds the unit's capacity (less what
// never comes back, such as failed GPUs). Consecutive keys have different values, so the keys are
// exactly the times at which the amount changes. Values may go below 0 (a job ran past its plan).
// Stored as a treap keyed by time whose nodes carry a lazy add and the min and max value of their
// subtree: a range add, the value at a time, and "the first key after t whose value is below / at
// least n" each cost O(log P) for P keys.
//
// GapIndex: for the units of one partition (units of the same capacity G, numbered 0..units-1),
// the gaps of every level g = 1..G: the maximal intervals [a, b) in which a unit's profile is at
// least g (b = +infinity for the last). Gaps of all units of one level are indexed together by
// start, with the largest end and length of every subtree, so that
//   - Earliest(g, seconds, from): the earliest t >= from at which some unit has at least g free
//     throughout [t, t + seconds) costs O(log gaps), not a search of every unit's profile;
//   - UnitsStartingAt(g, t, seconds): the units whose level-g gap starts exactly at t and lasts
//     `seconds` (at an earliest t > from, the only units with room then) costs O(log gaps + k).
// The owner calls Update(unit, profile, start, end) after every change of the unit's profile over
// [start, end) and Trim(unit, profile, now) after dropping its past; the index recomputes the
// unit's gaps there in O(G + keys in the affected gaps).
//
// Contract for planners of more resources than GPUs (CPUs, host memory per node): the profile's
// value is the GPU count; a planner that tracks other dimensions per node over time keeps them
// beside it (one profile per dimension, or a value type holding a vector), and may use the GPU
// gaps as a necessary condition only (a window with room for the GPUs may lack CPUs), checking
// the other dimensions on the units it returns. Nothing here depends on what a unit is.
#ifndef CLUSTERSIM_POLICIES_AVAILABILITY_PROFILE_H_
#define CLUSTERSIM_POLICIES_AVAILABILITY_PROFILE_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <utility>
#include <vector>

namespace clustersim {

class AvailabilityProfile {
 public:
  static constexpr double kInfinity = std::numeric_limits<double>::infinity();

  explicit AvailabilityProfile(int total);

  // Drops the keys before `now`, keeping the value at `now`.
  void Trim(double now);
  // Adds `delta` free over [start, end). REQUIRES start >= the first key.
  void Add(double start, double end, int delta);
  // The earliest t >= not_before with at least `amount` free throughout [t, t + seconds), or
  // +infinity if there is none at or before `limit`.
  double EarliestSlot(int amount, double seconds, double not_before,
                      double limit = kInfinity) const;
  // The least free amount over [start, end) (at `start` if end <= start).
  int MinOver(double start, double end) const;
  // The first time after `t` at which the free amount changes, or +infinity.
  double NextBreakpoint(double t) const;
  // The value in effect at t (the value of the greatest key <= t; 0 before the first key).
  int ValueAt(double t) const;
  // The first key.
  double FirstKey() const;
  // Calls visit(key, value) for the keys after `t` in increasing order while it returns true.
  template <typename Visit>
  void ForEachKeyAfter(double t, Visit&& visit) const {
    VisitAfter(root_, t, 0, visit);
  }

 private:
  struct Node {
    double key;
    int value;
    int lazy = 0;  // still to add to both children's subtrees
    int lo, hi;    // min and max value in the subtree
    uint64_t priority;
    int left = -1, right = -1;
  };

  int NewNode(double key, int value);
  void Release(int n);
  void Apply(int n, int delta);
  void Push(int n);
  void Pull(int n);
  void Split(int n, double key, int* less, int* rest);
  int Merge(int a, int b);
  int Floor(double t, bool strict);
  void EnsureKey(double t);
  void MergeIfEqualToPrevious(double t);
  template <typename May>
  int FirstAfter(int n, double t, const May& may, int add = 0) const;
  template <typename Visit>
  bool VisitAfter(int n, double t, int add, Visit& visit) const {
    if (n < 0) return true;
    const Node& node = nodes_[n];
    const int below = add + node.lazy;
    if (node.key > t) {
      if (!VisitAfter(node.left, t, below, visit)) return false;
      if (!visit(node.key, node.value + add)) return false;
    }
    return VisitAfter(node.right, t, below, visit);
  }

  std::vector<Node> nodes_;
  std::vector<int> free_;  // recycled node indices
  uint64_t rng_ = 0x9E3779B97F4A7C15ull;
  int root_;
};

class GapIndex {
 public:
  static constexpr double kInfinity = AvailabilityProfile::kInfinity;

  // `units` units of capacity `capacity` (>= 1), each with a profile that starts all free
  // (one gap [-infinity, +infinity) per level).
  GapIndex(int units, int capacity);

  int capacity() const { return capacity_; }
  // Recomputes `unit`'s gaps that overlap [start, end] from `profile` (its profile after a
  // change over [start, end)).
  void Update(int unit, const AvailabilityProfile& profile, double start, double end);
  // After profile.Trim(now): drops `unit`'s gaps that end at or before `now`, and starts its
  // first gap at the profile's first key.
  void Trim(int unit, const AvailabilityProfile& profile, double now);
  // The earliest t >= from at which some unit has at least `level` free throughout
  // [t, t + seconds) (the minimum over units of AvailabilityProfile::EarliestSlot), or +infinity.
  // REQUIRES 1 <= level <= capacity().
  double Earliest(int level, double seconds, double from) const;
  // Appends (ascending) the units whose level-`level` gap starts exactly at `t` and has room
  // throughout [t, t + seconds).
  void UnitsStartingAt(int level, double t, double seconds, std::vector<int>* out) const;
  // Calls visit(a, b) for `unit`'s gaps of level `level` that overlap (start, end) (a < end and
  // b > start), in increasing order.
  template <typename Visit>
  void ForEachGapOverlapping(int unit, int level, double start, double end, Visit&& visit) const {
    const std::map<double, double>& gaps = unit_gaps_[Slot(unit, level)];
    auto it = gaps.upper_bound(start);
    if (it != gaps.begin()) --it;
    for (; it != gaps.end() && it->first < end; ++it) {
      if (it->second > start) visit(it->first, it->second);
    }
  }

 private:
  // One level's gaps of every unit, keyed by (start, unit), with subtree maxima of end and
  // length (end - start).
  class Tree {
   public:
    void Insert(double start, double end, int unit);
    void Erase(double start, int unit);
    double Earliest(double seconds, double from) const;
    void StartingAt(double t, double seconds, std::vector<int>* out) const;

   private:
    struct Node {
      double start, end;
      int unit;
      uint64_t priority;
      int left = -1, right = -1;
      double max_end, max_length;
    };
    void Pull(int n);
    void Split(int n, double start, int unit, int* less, int* rest);  // (start, unit) goes right
    int Merge(int a, int b);
    double PrefixMaxEnd(double from) const;  // largest end among gaps with start <= from
    int FirstLongAfter(int n, double from, double seconds) const;
    void Collect(int n, double t, double seconds, std::vector<int>* out) const;

    std::vector<Node> nodes_;
    std::vector<int> free_;
    std::vector<int> path_;  // scratch: Erase's way down
    uint64_t rng_ = 0x2545F4914F6CDD1Dull;
    int root_ = -1;
  };

  size_t Slot(int unit, int level) const {
    return static_cast<size_t>(unit) * capacity_ + (level - 1);
  }
  void EraseGap(int unit, int level, double start);
  void AddGap(int unit, int level, double start, double end);

  int capacity_;
  std::vector<Tree> trees_;                            // by level - 1
  std::vector<std::map<double, double>> unit_gaps_;  // by Slot(unit, level): start -> end
  std::vector<double> open_;                         // scratch: run starts by level
  std::vector<std::vector<std::pair<double, double>>> old_gaps_, new_gaps_;  // scratch by level
};

}  // namespace clustersim

#endif  // CLUSTERSIM_POLICIES_AVAILABILITY_PROFILE_H_
