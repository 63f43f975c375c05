// conservative: conservative backfilling (docs/policies.md). Every waiting job holds a reservation
// (a start time and GPUs for its requested wall time): an arriving job gets the earliest slot that
// fits around the running jobs (ending by their wall times) and every existing reservation, which
// it never disturbs; at a timestamp with completions the reservations are first compressed (each
// waiting job, in submission order, is re-placed at its earliest slot around everything else,
// so no job moves later), then arrivals are placed, then every job whose reservation is now starts.
//
// Parameters: walltime (trace) = trace | exact | a factor f > 0 of the duration, as for easy
// (policies/backfill.h).
//
// The availability profile counts free GPUs per GPU type as a step function of time (see
// Profile). A reservation names a GPU type: among the job's allowed types on which its placement
// can exist at all, the one with the earliest slot (ties: the type listed first in the cluster).
// Every reservation start gets a timer, so a pass happens then even if no event does. When its
// time comes the job is placed with the run's placement, restricted to that type, on the live
// free GPUs. With `pool` counting is exact and that always succeeds. With node-aware placements
// the GPUs may be free in number but fragmented across nodes: then the job's reservation is
// removed and it is re-placed around everything else at the earliest slot starting at or after
// the next time that type's free count changes (a job of that type ends or a reservation starts
// or ends), or now on another allowed type; compression may bring it back earlier later. Nothing
// else moves.
//
// Compression runs at a timestamp with completions only if the profile gained capacity since the
// last one (a job ended before its estimated end, started with an estimate shorter than planned,
// was moved by the last compression, or left its slot because its placement failed): otherwise
// every reservation is already the earliest slot around the others and compressing would move
// nothing (a job ending exactly at its estimate frees nothing the profile did not count).
//
// Cost, for P breakpoints in a type's profile (P <= 2 x (running + waiting) + 1): placing a job
// is O(log P) per stretch of too-few GPUs it must skip, a reservation or release O(log P); a pass
// costs O((arrivals + starts) x log P), plus O(waiting x log P) when it compresses.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <unordered_map>

#include "policies/backfill.h"
#include "policies/registry.h"
#include "sim/util/error.h"

namespace clustersim {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// Free GPUs of one type over time, as a step function: key t with value f = f free from t until
// the next key. The first key is at or before the current time; the last holds the type's total.
// Consecutive keys have different values (equal neighbours are merged), so the keys are exactly
// the times at which the free count changes.
//
// Stored as a treap keyed by time whose nodes carry a lazy add and the min and max value of their
// subtree, so a range add, the value at a time and "the first key after t whose value is below /
// at least n" each cost O(log P) for P keys, and the earliest slot for a job costs O(log P) per
// stretch of too-few GPUs it has to skip.
class Profile {
 public:
  explicit Profile(int total) : root_(NewNode(-kInfinity, total)) {}

  // Drops the keys before `now`, keeping the value at `now`.
  void Trim(double now) {
    EnsureKey(now);
    int before = -1;
    Split(root_, now, &before, &root_);
    Release(before);
  }

  // Adds `delta` free GPUs over [start, end). REQUIRES start >= the first key.
  void Add(double start, double end, int delta) {
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

  // The earliest t >= not_before with at least `gpus` free throughout [t, t + seconds), or
  // +infinity if there is none.
  double EarliestSlot(int gpus, double seconds, double not_before) {
    auto at_least = [gpus](int /*lo*/, int hi) { return hi >= gpus; };
    auto below = [gpus](int lo, int /*hi*/) { return lo < gpus; };
    double start = not_before;
    if (ValueAt(start) < gpus) {
      const int next = FirstAfter(root_, start, at_least);
      if (next < 0) return kInfinity;
      start = nodes_[next].key;
    }
    while (true) {
      // The free count is >= gpus at `start`; find where it next drops below.
      const int short_of = FirstAfter(root_, start, below);
      if (short_of < 0 || nodes_[short_of].key >= start + seconds) return start;
      const int next = FirstAfter(root_, nodes_[short_of].key, at_least);
      if (next < 0) return kInfinity;
      start = nodes_[next].key;
    }
  }

  // The first time after `t` at which the free count changes, or +infinity.
  double NextBreakpoint(double t) {
    const int value = ValueAt(t);
    const int next =
        FirstAfter(root_, t, [value](int lo, int hi) { return lo != value || hi != value; });
    return next < 0 ? kInfinity : nodes_[next].key;
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

  int NewNode(double key, int value) {
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
  void Release(int n) {
    if (n < 0) return;
    Release(nodes_[n].left);
    Release(nodes_[n].right);
    free_.push_back(n);
  }
  void Apply(int n, int delta) {
    if (n < 0) return;
    Node& node = nodes_[n];
    node.value += delta;
    node.lazy += delta;
    node.lo += delta;
    node.hi += delta;
  }
  void Push(int n) {
    Node& node = nodes_[n];
    if (node.lazy == 0) return;
    Apply(node.left, node.lazy);
    Apply(node.right, node.lazy);
    node.lazy = 0;
  }
  void Pull(int n) {
    Node& node = nodes_[n];
    node.lo = node.hi = node.value;
    for (int child : {node.left, node.right}) {
      if (child < 0) continue;
      node.lo = std::min(node.lo, nodes_[child].lo);
      node.hi = std::max(node.hi, nodes_[child].hi);
    }
  }
  // Splits the subtree `n` into keys < key (*less) and keys >= key (*rest).
  void Split(int n, double key, int* less, int* rest) {
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
  int Merge(int a, int b) {
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
  int Floor(double t, bool strict) {
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
  int ValueAt(double t) { return nodes_[Floor(t, false)].value; }
  void EnsureKey(double t) {
    const int floor = Floor(t, false);
    if (nodes_[floor].key == t) return;
    int less = -1, rest = -1;
    Split(root_, t, &less, &rest);
    root_ = Merge(Merge(less, NewNode(t, nodes_[floor].value)), rest);
  }
  void MergeIfEqualToPrevious(double t) {
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
  template <typename May>
  int FirstAfter(int n, double t, const May& may) {
    if (n < 0 || !may(nodes_[n].lo, nodes_[n].hi)) return -1;
    Push(n);
    const Node& node = nodes_[n];
    if (node.key > t) {
      const int left = FirstAfter(node.left, t, may);
      if (left >= 0) return left;
      if (may(nodes_[n].value, nodes_[n].value)) return n;
    }
    return FirstAfter(nodes_[n].right, t, may);
  }

  std::vector<Node> nodes_;
  std::vector<int> free_;  // recycled node indices
  uint64_t rng_ = 0x9E3779B97F4A7C15ull;
  int root_;
};

class Conservative final : public Policy {
 public:
  explicit Conservative(WalltimeRule rule) : rule_(rule) {}

  void Schedule(SchedulingContext& context) override;
  void OnArrival(SchedulingContext& /*context*/, JobId id) override { arrivals_.push_back(id); }
  void OnCompletion(SchedulingContext& context, JobId id) override;
  // Its slot is freed as at a completion; it gets a new reservation at the next pass.
  void OnRequeue(SchedulingContext& context, JobId id) override {
    OnCompletion(context, id);
    arrivals_.push_back(id);
  }
  void OnTimer(SchedulingContext& context, JobId /*id*/, int /*tag*/) override {
    timers_.erase(context.now());
  }
  double RequestedWalltime(const Job& job) const override { return rule_.Requested(job); }

 private:
  struct Slot {
    double start = 0;
    double end = 0;
    int type = -1;
    int gpus = 0;
  };

  void Init(const SchedulingContext& context);
  bool Placeable(const SchedulingContext& context, int gpus, int type);
  // Reserves the earliest slot for a waiting job: from now on every allowed type, except types in
  // `failed_types` (its placement failed there now), searched from their next breakpoint.
  void Place(SchedulingContext& context, JobId id, uint64_t failed_types);
  void Unreserve(JobId id);
  void StartDue(SchedulingContext& context);

  WalltimeRule rule_;
  std::vector<Profile> profiles_;                  // by catalog GPU type (empty types unused)
  std::optional<Resources> empty_;                 // the empty cluster, for Placeable
  std::map<std::pair<int, int>, bool> placeable_;  // (gpus, type) -> a placement exists
  std::unordered_map<JobId, Slot> reserved_;       // waiting jobs' reservations
  std::set<std::pair<double, JobId>> by_start_;    // the same, by (start, id)
  std::unordered_map<JobId, Slot> running_;        // [start, estimated end) of running jobs
  std::vector<JobId> arrivals_;                    // since the last pass
  std::vector<JobId> unplaced_;                    // no slot found (see Place); retried each pass
  std::set<double> timers_;                        // times with a pass requested (SetTimer)
  bool compress_ = false;                 // this timestamp had completions and something to gain
  bool freed_since_compression_ = false;  // the profile gained capacity since the last one
};

void Conservative::Init(const SchedulingContext& context) {
  const Cluster& cluster = context.cluster();
  for (size_t type = 0; type < cluster.catalog().gpus().size(); ++type) {
    profiles_.emplace_back(cluster.GpusOfType(static_cast<int>(type)));
  }
  empty_.emplace(context.resources());  // the first pass runs before any start
}

bool Conservative::Placeable(const SchedulingContext& context, int gpus, int type) {
  auto key = std::make_pair(gpus, type);
  auto it = placeable_.find(key);
  if (it == placeable_.end()) {
    PlacementRequest request;
    request.gpus = gpus;
    request.type_mask = uint64_t{1} << type;
    Allocation scratch;
    it = placeable_.emplace(key, context.placement().Find(*empty_, request, &scratch)).first;
  }
  return it->second;
}

void Conservative::Place(SchedulingContext& context, JobId id, uint64_t failed_types) {
  const PlacementRequest& request = context.run(id).request;
  const double seconds = rule_.Planned(context.job(id));
  const double now = context.now();
  Slot best;
  best.start = kInfinity;
  for (int type : context.cluster().gpu_types()) {
    if (!request.AllowsType(type) || !Placeable(context, request.gpus, type)) continue;
    Profile& profile = profiles_[type];  // queries push lazy adds down
    const double not_before = (failed_types >> type) & 1 ? profile.NextBreakpoint(now) : now;
    if (not_before == kInfinity) continue;
    const double start = profile.EarliestSlot(request.gpus, seconds, not_before);
    if (start < best.start) {
      best.start = start;
      best.type = type;
    }
  }
  if (best.type < 0 || best.start == kInfinity) {
    // Only possible if a running job holds GPUs past its estimated end (the engine's wall-time
    // enforcement turned off): wait for the next pass.
    unplaced_.push_back(id);
    return;
  }
  best.end = best.start + seconds;
  best.gpus = request.gpus;
  profiles_[best.type].Add(best.start, best.end, -best.gpus);
  reserved_[id] = best;
  by_start_.emplace(best.start, id);
  // The engine runs a pass only at events; a reservation may start at an estimated end that no
  // event marks (that job ended early, or its own reservation moved), so ask for a pass then.
  if (best.start > now && timers_.insert(best.start).second) context.SetTimer(best.start, id, 0);
}

void Conservative::Unreserve(JobId id) {
  auto it = reserved_.find(id);
  const Slot& slot = it->second;
  profiles_[slot.type].Add(slot.start, slot.end, slot.gpus);
  by_start_.erase(std::make_pair(slot.start, id));
  reserved_.erase(it);
}

void Conservative::OnCompletion(SchedulingContext& context, JobId id) {
  auto it = running_.find(id);
  if (it == running_.end()) return;
  const Slot& slot = it->second;
  if (context.now() < slot.end) {
    profiles_[slot.type].Add(context.now(), slot.end, slot.gpus);
    freed_since_compression_ = true;
  }
  // A timestamp with completions: compress if anything was freed that the profile had counted.
  compress_ = freed_since_compression_;
  running_.erase(it);
}

void Conservative::StartDue(SchedulingContext& context) {
  const double now = context.now();
  std::unordered_map<JobId, uint64_t> failed;  // GPU types whose placement failed this pass
  while (!by_start_.empty() && by_start_.begin()->first <= now) {
    const JobId id = by_start_.begin()->second;
    const int type = reserved_[id].type;
    Unreserve(id);
    PlacementRequest request = context.run(id).request;
    request.type_mask = uint64_t{1} << type;
    Allocation allocation;
    if (!context.placement().Find(context.resources(), request, &allocation)) {
      failed[id] |= uint64_t{1} << type;
      Place(context, id, failed[id]);
      freed_since_compression_ = true;  // its old slot is free for others
      continue;
    }
    context.Start(id, std::move(allocation));
    Slot slot;
    slot.start = now;
    slot.end = rule_.EstimatedEnd(context, id);
    slot.type = type;
    slot.gpus = request.gpus;
    // Without a requested wall time the estimate is the true end, which on a faster GPU (runtime
    // model `hardware`) is before the planned one: the capacity freed is used at the next
    // completion's compression.
    if (slot.end < now + rule_.Planned(context.job(id))) freed_since_compression_ = true;
    profiles_[type].Add(slot.start, slot.end, -slot.gpus);
    running_[id] = slot;
  }
}

void Conservative::Schedule(SchedulingContext& context) {
  if (profiles_.empty()) Init(context);
  const double now = context.now();
  for (int type : context.cluster().gpu_types()) profiles_[type].Trim(now);
  if (compress_) {
    // Submission order; each job is re-placed around everything else, later jobs included, and
    // can only move earlier (its old slot is still free to it).
    bool moved = false;
    for (JobId id = context.QueueFront(); id != kNoJob; id = context.QueueNext(id)) {
      auto it = reserved_.find(id);
      if (it == reserved_.end()) continue;  // arrived at this timestamp: placed below
      const Slot old = it->second;
      Unreserve(id);
      Place(context, id, 0);
      auto placed = reserved_.find(id);
      moved = moved || placed == reserved_.end() || placed->second.start != old.start ||
              placed->second.type != old.type;
    }
    compress_ = false;
    // A job that moved left its old slot free: jobs before it in the order may use it at the
    // next compression.
    freed_since_compression_ = moved;
  }
  std::vector<JobId> waiting;
  waiting.swap(unplaced_);
  waiting.insert(waiting.end(), arrivals_.begin(), arrivals_.end());
  arrivals_.clear();
  for (JobId id : waiting) Place(context, id, 0);
  StartDue(context);
}

}  // namespace
}  // namespace clustersim

CLUSTERSIM_REGISTER_POLICY(conservative, "conservative",
                           "conservative backfilling: every waiting job holds a reservation; "
                           "later jobs fill gaps without delaying any of them",
                           clustersim::WalltimeRule::kHelp, [](const clustersim::Params& params) {
                             return std::make_unique<clustersim::Conservative>(
                                 clustersim::WalltimeRule::FromParams(params));
                           });
