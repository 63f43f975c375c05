// conservative: conservative backfilling (docs/backfilling.md). Every waiting job holds a
// reservation (a start time and GPUs for its requested wall time): an arriving job gets the
// earliest slot that fits around the running jobs (ending by their wall times) and every existing
// reservation, which it never disturbs; at a timestamp with completions the reservations are first
// compressed (each waiting job, in submission order, moves to its earliest slot around everything
// else if that is earlier: no job moves later), then arrivals are placed, then every job whose
// reservation is now starts. A job's first reservation is its promise (SchedulingContext::Promise,
// the `reserved_start` column): while every job runs at most its plan and nothing fails, no job
// starts later than promised (KeepsPromises; --check verifies it).
//
// Parameters: walltime (trace) = trace | exact | a factor f > 0 of the duration, as for easy
// (policies/backfill.h).
//
// The availability profile is a step function of free GPUs over time per unit (see Profile):
// - With a placement that ignores nodes (`pool`), and no host limits, a unit is a GPU type, and
//   GPUs are counted. A
//   reservation names a type: among the job's allowed types on which its placement can exist at
//   all, the one with the earliest slot (ties: the type listed first in the cluster). At its time
//   the job is placed with `pool` on that type's live free GPUs, which counting guarantees.
// - With node-aware placements (first-fit, best-fit, topology, frag-aware) a unit is a node, as
//   Slurm's backfill plans nodes. A job's slot is the earliest t (now, or a time at which some
//   node gains GPUs) at which the run's placement, asked on the cluster as it is free throughout
//   [t, t + wall time) — each node with the least free count its profile has there — finds room;
//   the reservation holds that many GPUs on each node the placement chose. At its time the job
//   starts on those nodes, on their lowest-index free GPUs (within a node a reservation holds a
//   number of GPUs, not particular ones; first-fit, best-fit and frag-aware take the lowest ones
//   too, topology's choice of GPUs inside a node is not kept). Those GPUs are free unless a job
//   ran past its plan or GPUs failed; then the job is re-placed from now (from the next time
//   some node gains GPUs if that failed too in this pass). Failed GPUs are held on their node's
//   profile until repaired; the reservations on a node that a failure, or a job running past
//   its plan, over-commits are re-placed in submission order (they may move later).
// - Under host limits (docs/resources.md: some job states CPUs or host memory the cluster
//   declares) a unit is a node with every placement, `pool` included, and each node has two more
//   profiles, its free CPUs and free memory over time. A reservation holds on each of its nodes
//   the GPUs and the host charge the engine will take there (HostChargeOn); the cluster as free
//   throughout a window has each node's least free GPUs, CPUs and memory there; the necessary
//   test asks a node for all three at once (with `pool`, which spreads a job over any nodes of a
//   type, the GPUs of the type counted together, the CPUs checked by the placement). A CPU-only
//   job (docs/resources.md#cpu-only-jobs) reserves its node's CPUs and memory and no GPU. So
//   the promises hold under host limits exactly as without.
// Every reservation start gets a timer, so a pass happens then even if no event does. On one
// node the two profiles coincide, and every placement gives the pool schedule.
//
// Compression runs at a timestamp with completions only if the profile gained capacity since the
// last one (a job ended before its estimated end, started with an estimate shorter than planned,
// was moved by the last compression, left its slot because its placement failed, or GPUs were
// repaired): otherwise every reservation is already the earliest slot around the others and
// compressing would move nothing (a job ending exactly at its estimate frees nothing the profile
// did not count). Counting, a job is re-placed at its earliest slot (its type may change at the
// same start); per node, it keeps its slot unless one starts earlier.
//
// Cost of a pass, for P breakpoints in a unit's profile (P <= 2 x (running + waiting jobs on the
// unit) + 1; a reservation or release costs O(log P) per unit it holds):
// - counting: placing a job is O(log P) per stretch of too-few GPUs it must skip; a pass costs
//   O((arrivals + starts) x log P), plus O(waiting x log P) when it compresses;
// - per node, for N nodes of the job's types: a job that fits now costs two Finds of the
//   placement on a mirror of the cluster now plus O(log P) per node with a reservation in its
//   window; otherwise placing it is O(N x log P) per node stretch it skips (each node is searched
//   only up to the best start found so far) plus O(N x log P) for the window's free counts and
//   one Find. A pass costs that per arrival, plus O(nodes held x log P) per start, plus that per
//   waiting job when it compresses (bounded by the job's current start). Measured on the
//   82,247-job Philly trace on 56 and 128 x 8 GPUs and on 100,000 jobs on 1,024 x 8
//   (bench/README.md).
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <unordered_map>

#include "policies/backfill.h"
#include "policies/registry.h"
#include "sim/util/error.h"
#include "sim/util/index_set.h"

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
  // +infinity if there is none at or before `limit`.
  double EarliestSlot(int gpus, double seconds, double not_before,
                      double limit = kInfinity) const {
    auto at_least = [gpus](int /*lo*/, int hi) { return hi >= gpus; };
    auto below = [gpus](int lo, int /*hi*/) { return lo < gpus; };
    double start = not_before;
    if (ValueAt(start) < gpus) {
      const int next = FirstAfter(root_, start, at_least);
      if (next < 0) return kInfinity;
      start = nodes_[next].key;
    }
    while (start <= limit) {
      // The free count is >= gpus at `start`; find where it next drops below.
      const int short_of = FirstAfter(root_, start, below);
      if (short_of < 0 || nodes_[short_of].key >= start + seconds) return start;
      const int next = FirstAfter(root_, nodes_[short_of].key, at_least);
      if (next < 0) return kInfinity;
      start = nodes_[next].key;
    }
    return kInfinity;
  }

  // The least free count over [start, end) (at `start` if end <= start).
  int MinOver(double start, double end) const {
    int least = ValueAt(start);
    if (!(end > start)) return least;
    // Keys in (start, end): descend to the first node inside, then take the part of its left
    // subtree after `start` and of its right subtree before `end`. A node's value, lo and hi
    // lack the lazy adds of its ancestors, summed on the way down.
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

  // The first time after `t` at which the free count changes, or +infinity.
  double NextBreakpoint(double t) const {
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
  // The value of the greatest key <= t (queries read lazy adds on the way down, never push).
  int ValueAt(double t) const {
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
  // `add`: the lazy adds of n's ancestors.
  template <typename May>
  int FirstAfter(int n, double t, const May& may, int add = 0) const {
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
  bool KeepsPromises() const override { return true; }
  void BeforeRun(const Trace& trace, uint64_t seed) override { rule_.Prepare(trace, seed); }
  std::string PlanningEstimates() const override { return rule_.Describe(); }

 private:
  // A reservation or a running job's interval: GPUs held on profile units over [start, end).
  // A unit is a GPU type (counting) or a node (node-aware): (unit, GPUs) pairs, units ascending;
  // a CPU-only job holds 0 GPUs on its one node. Under host limits `charges` holds, per unit, the
  // CPUs and memory the job is charged on that node (HostChargeOn); else it is empty.
  struct Slot {
    double start = 0;
    double end = 0;
    int type = -1;
    int gpus = 0;
    std::vector<std::pair<int, int>> units;
    std::vector<HostCharge> charges;
  };

  void Init(const SchedulingContext& context);
  // Adds (sign -1: holds) or gives back (+1) the slot's GPUs over [from, slot.end).
  void Apply(const Slot& slot, double from, int sign);
  void Reserve(SchedulingContext& context, JobId id, Slot slot);
  void Unreserve(JobId id);
  // Reserves the earliest slot for a waiting job (counting or per node, by the placement).
  void Place(SchedulingContext& context, JobId id, uint64_t failed_types, double not_before);
  void StartDue(SchedulingContext& context);

  // Counting (pool).
  bool Placeable(const SchedulingContext& context, int gpus, int type);
  void PlaceCounting(SchedulingContext& context, JobId id, uint64_t failed_types);
  bool StartCounting(SchedulingContext& context, JobId id, const Slot& slot,
                     Allocation* allocation);

  // Per node (first-fit, best-fit, topology, frag-aware).
  // Reserves the earliest slot from `not_before` on that starts before `before`; returns false
  // (reserving nothing) if there is none.
  bool PlaceOnNodes(SchedulingContext& context, JobId id, double not_before,
                    double before = kInfinity);
  // The earliest t >= from (and <= limit) at which some allowed partition passes the necessary
  // test for the request: a node with `gpus` free throughout [t, t + seconds) when the job fits
  // in one node, else enough completely free nodes plus one for the remainder.
  double EarliestOnNodes(const PlacementRequest& request, double seconds, double from,
                         double limit);
  double EarliestAcross(const PlacementRequest& request, const Partition& part, double seconds,
                        double from, double limit);
  // The earliest t in [from, limit] at which `node` has `gpus` GPUs and the CPUs and memory of
  // `charge` free throughout [t, t + seconds), or +infinity.
  double EarliestOnNode(int node, int gpus, const HostCharge& charge, double seconds, double from,
                        double limit) const;
  // True if `node` has `gpus` GPUs and `charge` free throughout [t, t + seconds).
  bool NodeHolds(int node, int gpus, const HostCharge& charge, double t, double seconds) const;
  // What a job of `request` holding `gpus_on_node` of its GPUs on `node` is charged there (none
  // without host limits).
  HostCharge ChargeOn(const PlacementRequest& request, int node, int gpus_on_node) const;
  // The run's placement on the cluster as free throughout [t, t + seconds) (each node with the
  // least free count of its profile there).
  bool FindAt(const SchedulingContext& context, const PlacementRequest& request, double t,
              double seconds, Allocation* out);
  double NextBreakpointOnNodes(const PlacementRequest& request, double t);
  void SetScratchFree(int node, int free) { SetFree(*scratch_, scratch_free_, node, free); }
  // Sets `node`'s free GPUs in `state` (its lowest `free` ones; `frees` holds the counts).
  void SetFree(Resources& state, std::vector<int>& frees, int node, int free);
  // Sets `node`'s free CPUs (milli-cores) and memory (MiB) in `state` (host-limited), each
  // clamped to [0, the node's capacity].
  static void SetHostFree(Resources& state, int node, int64_t cpu_milli, int64_t memory_mib);
  // The least free CPUs and memory of `node` over [t, t + seconds) in its profiles.
  HostCharge LeastHostFree(int node, double t, double seconds) const;
  void MirrorAdd(const Slot& slot, int sign);
  // The placement now for a job planned `seconds`, from the mirror plus the reservations that
  // overlap the window: the state FindAt(now) builds, at a cost in the nodes with reservations
  // instead of all nodes. Returns kUnknown if a running job outlived its estimate (the mirror
  // still holds it, the profile does not).
  enum class NowFit { kFits, kNoFit, kUnknown };
  NowFit FindNow(const SchedulingContext& context, const PlacementRequest& request,
                 double seconds, Allocation* out);
  void SyncFailedGpus(SchedulingContext& context);
  // Re-places every reservation on `node` if its profile is over-committed somewhere from now on
  // (a failure or a job running past its plan took GPUs the reservations counted on).
  void Bump(SchedulingContext& context, int node);

  WalltimeRule rule_;
  const Cluster* cluster_ = nullptr;
  bool by_nodes_ = false;          // the profile units are nodes (else GPU types)
  std::vector<Profile> profiles_;  // by unit
  // Under host limits (units are nodes): free CPUs (milli-cores) and memory (MiB) per node over
  // time; empty otherwise. A node that does not declare a dimension has a profile of 0 that no
  // charge touches.
  bool host_ = false;
  std::vector<Profile> cpu_profiles_;
  std::vector<Profile> memory_profiles_;
  // `pool` under host limits: free GPUs per type over time besides the node profiles, the
  // necessary test for a placement that spreads a job over any nodes of a type.
  std::vector<Profile> type_profiles_;
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
  // Per node.
  std::optional<Resources> scratch_;          // the cluster as free throughout a window
  std::vector<int> scratch_free_;             // by node: free GPUs in scratch_ (its lowest ones)
  // by node: the reservations holding GPUs there, by (start, id)
  std::vector<std::set<std::pair<double, JobId>>> node_jobs_;
  IndexSet reserved_nodes_;  // nodes with a reservation
  // The cluster now without reservations: each node's GPUs minus its running jobs' and failed
  // GPUs (its lowest free), kept in step with starts, completions and failures.
  std::optional<Resources> mirror_;
  std::vector<int> mirror_free_;
  std::set<std::pair<double, JobId>> running_ends_;  // running jobs by estimated end
  std::vector<int> failed_on_node_;           // by node: failed GPUs held in its profile
  uint64_t failed_version_ = 0;
  std::vector<double> until_;                 // scratch for EarliestAcross
  std::vector<int> gpu_list_;                 // scratch for SetScratchFree
  static constexpr uint64_t kTrimPasses = 64;
  uint64_t passes_ = 0;
};

void Conservative::Init(const SchedulingContext& context) {
  const Cluster& cluster = context.cluster();
  cluster_ = &cluster;
  // Under host limits (CPUs, host memory) the units are nodes with every placement: CPUs and
  // memory are per node, so counting GPUs per type would promise what a node cannot give.
  host_ = context.resources().host_limited();
  by_nodes_ = !context.placement().IgnoresNodes() || host_;
  if (by_nodes_) {
    for (const Node& node : cluster.nodes()) profiles_.emplace_back(node.gpu_count);
    if (host_) {
      for (const Node& node : cluster.nodes()) {
        cpu_profiles_.emplace_back(NodeCpuMilli(node));
        memory_profiles_.emplace_back(NodeMemoryMib(node));
      }
      if (context.placement().IgnoresNodes()) {
        for (size_t type = 0; type < cluster.catalog().gpus().size(); ++type) {
          type_profiles_.emplace_back(cluster.GpusOfType(static_cast<int>(type)));
        }
      }
    }
    scratch_.emplace(cluster);  // everything free: scratch_free_ below
    if (host_) scratch_->EnableHostLimits();
    scratch_free_.resize(cluster.node_count());
    for (const Node& node : cluster.nodes()) scratch_free_[node.index] = node.gpu_count;
    node_jobs_.resize(cluster.node_count());
    reserved_nodes_ = IndexSet(cluster.node_count());
    failed_on_node_.assign(cluster.node_count(), 0);
    mirror_.emplace(cluster);
    if (host_) mirror_->EnableHostLimits();
    mirror_free_ = scratch_free_;
  } else {
    for (size_t type = 0; type < cluster.catalog().gpus().size(); ++type) {
      profiles_.emplace_back(cluster.GpusOfType(static_cast<int>(type)));
    }
  }
  empty_.emplace(context.resources());
}

void Conservative::Apply(const Slot& slot, double from, int sign) {
  for (size_t i = 0; i < slot.units.size(); ++i) {
    const auto& [unit, gpus] = slot.units[i];
    if (gpus != 0) {
      profiles_[unit].Add(from, slot.end, sign * gpus);
      if (!type_profiles_.empty()) {
        type_profiles_[cluster_->node(unit).gpu_type].Add(from, slot.end, sign * gpus);
      }
    }
    if (slot.charges.empty()) continue;
    const HostCharge& charge = slot.charges[i];
    if (charge.cpu_milli != 0) cpu_profiles_[unit].Add(from, slot.end, sign * charge.cpu_milli);
    if (charge.memory_mib != 0) {
      memory_profiles_[unit].Add(from, slot.end, sign * charge.memory_mib);
    }
  }
}

HostCharge Conservative::ChargeOn(const PlacementRequest& request, int node,
                                  int gpus_on_node) const {
  if (!host_) return HostCharge{};
  return HostChargeOn(cluster_->node(node), request.host, gpus_on_node,
                      gpus_on_node == 0 ? 0 : request.gpus, 0);
}

double Conservative::EarliestOnNode(int node, int gpus, const HostCharge& charge,
                                    double seconds, double from, double limit) const {
  // Each dimension's earliest slot from t on, in turn, until all agree (t only grows, to
  // breakpoints of the profiles).
  double t = from;
  while (true) {
    double next = t;
    if (gpus > 0) next = profiles_[node].EarliestSlot(gpus, seconds, next, limit);
    if (next != kInfinity && charge.cpu_milli > 0) {
      next = cpu_profiles_[node].EarliestSlot(charge.cpu_milli, seconds, next, limit);
    }
    if (next != kInfinity && charge.memory_mib > 0) {
      next = memory_profiles_[node].EarliestSlot(charge.memory_mib, seconds, next, limit);
    }
    if (next == kInfinity || next > limit) return kInfinity;
    if (next == t) return t;
    t = next;
  }
}

bool Conservative::NodeHolds(int node, int gpus, const HostCharge& charge, double t,
                             double seconds) const {
  if (gpus > 0 && profiles_[node].MinOver(t, t + seconds) < gpus) return false;
  if (charge.cpu_milli > 0 && cpu_profiles_[node].MinOver(t, t + seconds) < charge.cpu_milli) {
    return false;
  }
  return charge.memory_mib <= 0 ||
         memory_profiles_[node].MinOver(t, t + seconds) >= charge.memory_mib;
}

HostCharge Conservative::LeastHostFree(int node, double t, double seconds) const {
  return HostCharge{cpu_profiles_[node].MinOver(t, t + seconds),
                    memory_profiles_[node].MinOver(t, t + seconds)};
}

void Conservative::SetHostFree(Resources& state, int node, int64_t cpu_milli,
                               int64_t memory_mib) {
  const Node& spec = state.cluster().node(node);
  const int64_t cpu = std::clamp<int64_t>(cpu_milli, 0, NodeCpuMilli(spec));
  const int64_t memory = std::clamp<int64_t>(memory_mib, 0, NodeMemoryMib(spec));
  // A CPU-only charge of (c, m) on a node is c and m in full (HostChargeOn with no GPUs).
  auto change = [&](int32_t have, int64_t want, bool is_cpu) {
    if (want == have) return;
    const int32_t delta = static_cast<int32_t>(std::abs(want - have));
    const HostDemand d = is_cpu ? HostDemand{delta, 0} : HostDemand{0, delta};
    if (want < have) {
      state.AllocateHostOn(node, d);
    } else {
      state.ReleaseHostOn(node, d);
    }
  };
  change(state.free_cpu_milli(node), cpu, true);
  change(state.free_memory_mib(node), memory, false);
}

void Conservative::Reserve(SchedulingContext& context, JobId id, Slot slot) {
  const double now = context.now();
  Apply(slot, slot.start, -1);
  if (by_nodes_) {
    for (const auto& unit : slot.units) {
      if (node_jobs_[unit.first].empty()) reserved_nodes_.Insert(unit.first);
      node_jobs_[unit.first].emplace(slot.start, id);
    }
  }
  by_start_.emplace(slot.start, id);
  context.Promise(id, slot.start);
  // The engine runs a pass only at events; a reservation may start at an estimated end that no
  // event marks (that job ended early, or its own reservation moved), so ask for a pass then.
  if (slot.start > now && timers_.insert(slot.start).second) context.SetTimer(slot.start, id, 0);
  // Wait reasons (docs/metrics.md#wait-reasons), stated at every (re)placement: a job whose slot
  // is later although it fits now waits for other jobs' reservations; else for what stops it now.
  if (slot.start > now) {
    context.SetWaitReason(id, context.NoFitReason(id).value_or(WaitReason::kReservation));
  }
  reserved_[id] = std::move(slot);
}

void Conservative::Unreserve(JobId id) {
  auto it = reserved_.find(id);
  const Slot& slot = it->second;
  Apply(slot, slot.start, +1);
  if (by_nodes_) {
    for (const auto& unit : slot.units) {
      node_jobs_[unit.first].erase(std::make_pair(slot.start, id));
      if (node_jobs_[unit.first].empty()) reserved_nodes_.Erase(unit.first);
    }
  }
  by_start_.erase(std::make_pair(slot.start, id));
  reserved_.erase(it);
}

void Conservative::Place(SchedulingContext& context, JobId id, uint64_t failed_types,
                         double not_before) {
  if (by_nodes_) {
    PlaceOnNodes(context, id, not_before);
  } else {
    PlaceCounting(context, id, failed_types);
  }
}

// ---- counting ----

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

void Conservative::PlaceCounting(SchedulingContext& context, JobId id, uint64_t failed_types) {
  const PlacementRequest& request = context.run(id).request;
  const double seconds = rule_.Planned(context.job(id));
  const double now = context.now();
  Slot best;
  best.start = kInfinity;
  for (int type : context.cluster().gpu_types()) {
    if (!request.AllowsType(type) || !Placeable(context, request.gpus, type)) continue;
    const Profile& profile = profiles_[type];
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
  best.units.emplace_back(best.type, best.gpus);
  Reserve(context, id, std::move(best));
}

bool Conservative::StartCounting(SchedulingContext& context, JobId id, const Slot& slot,
                                 Allocation* allocation) {
  PlacementRequest request = context.run(id).request;
  request.type_mask = uint64_t{1} << slot.type;
  return context.placement().Find(context.resources(), request, allocation);
}

// ---- per node ----

void Conservative::SetFree(Resources& state, std::vector<int>& frees, int node, int free) {
  const int current = frees[node];
  if (free == current) return;
  // The node's lowest `free` GPUs are free in the state: within a node a reservation holds a
  // number of GPUs, not particular ones.
  const int first = state.cluster().node(node).first_gpu;
  gpu_list_.clear();
  for (int g = std::min(free, current); g < std::max(free, current); ++g) {
    gpu_list_.push_back(first + g);
  }
  if (free < current) {
    state.Allocate(gpu_list_);
  } else {
    state.Release(gpu_list_);
  }
  frees[node] = free;
}

void Conservative::MirrorAdd(const Slot& slot, int sign) {
  for (size_t i = 0; i < slot.units.size(); ++i) {
    const auto& [node, gpus] = slot.units[i];
    SetFree(*mirror_, mirror_free_, node, mirror_free_[node] + sign * gpus);
    if (slot.charges.empty()) continue;
    SetHostFree(*mirror_, node,
                int64_t{mirror_->free_cpu_milli(node)} + sign * slot.charges[i].cpu_milli,
                int64_t{mirror_->free_memory_mib(node)} + sign * slot.charges[i].memory_mib);
  }
}

Conservative::NowFit Conservative::FindNow(const SchedulingContext& context,
                                           const PlacementRequest& request, double seconds,
                                           Allocation* out) {
  const double now = context.now();
  if (!running_ends_.empty() && running_ends_.begin()->first <= now) return NowFit::kUnknown;
  // Reservations only take GPUs away: if the job does not fit without them, it does not now.
  if (!context.placement().Find(*mirror_, request, out)) return NowFit::kNoFit;
  // A node without a reservation before now + seconds keeps at least its free GPUs (CPUs,
  // memory) of now through the window (running jobs only end); the others get their least free
  // count.
  struct Changed {
    int node;
    int free;  // mirror free GPUs before
    HostCharge host;  // mirror free CPUs and memory before
  };
  std::vector<Changed> changed;
  for (int node = reserved_nodes_.FindFirst(); node >= 0;
       node = reserved_nodes_.FindFrom(node + 1)) {
    const Node& spec = context.cluster().node(node);
    if (!request.AllowsType(spec.gpu_type)) continue;
    if (!(node_jobs_[node].begin()->first < now + seconds)) continue;
    const int least = std::clamp(profiles_[node].MinOver(now, now + seconds), 0, spec.gpu_count);
    HostCharge host_now;
    HostCharge host_least;
    if (host_) {
      host_now = HostCharge{mirror_->free_cpu_milli(node), mirror_->free_memory_mib(node)};
      host_least = LeastHostFree(node, now, seconds);
      host_least.cpu_milli = std::clamp(host_least.cpu_milli, 0, NodeCpuMilli(spec));
      host_least.memory_mib = std::clamp(host_least.memory_mib, 0, NodeMemoryMib(spec));
    }
    if (least == mirror_free_[node] && host_least.cpu_milli == host_now.cpu_milli &&
        host_least.memory_mib == host_now.memory_mib) {
      continue;
    }
    changed.push_back(Changed{node, mirror_free_[node], host_now});
    SetFree(*mirror_, mirror_free_, node, least);
    if (host_) SetHostFree(*mirror_, node, host_least.cpu_milli, host_least.memory_mib);
  }
  const bool fits = changed.empty() || context.placement().Find(*mirror_, request, out);
  for (const Changed& c : changed) {
    SetFree(*mirror_, mirror_free_, c.node, c.free);
    if (host_) SetHostFree(*mirror_, c.node, c.host.cpu_milli, c.host.memory_mib);
  }
  return fits ? NowFit::kFits : NowFit::kNoFit;
}

bool Conservative::FindAt(const SchedulingContext& context, const PlacementRequest& request,
                          double t, double seconds, Allocation* out) {
  for (const Partition& part : scratch_->partitions()) {
    if (!request.AllowsType(part.gpu_type)) continue;
    for (int node : part.nodes) {
      const int least = profiles_[node].MinOver(t, t + seconds);
      SetScratchFree(node, std::clamp(least, 0, part.gpus_per_node));
      if (host_) {
        const HostCharge host = LeastHostFree(node, t, seconds);
        SetHostFree(*scratch_, node, host.cpu_milli, host.memory_mib);
      }
    }
  }
  return context.placement().Find(*scratch_, request, out);
}

double Conservative::EarliestAcross(const PlacementRequest& request, const Partition& part,
                                    double seconds, double from, double limit) {
  const int gpus = request.gpus;
  const int g = part.gpus_per_node;
  const int whole = gpus / g;
  const int remainder = gpus % g;
  const int nodes = static_cast<int>(part.nodes.size());
  if (nodes < whole + (remainder > 0 ? 1 : 0)) return kInfinity;
  // until_[i]: the earliest time >= t at which node i is completely free throughout the window
  // (valid while >= t: no earlier such time exists from the t it was computed for on).
  until_.assign(nodes, -kInfinity);
  std::vector<double> sorted(nodes);
  double t = from;
  while (t <= limit) {
    for (int i = 0; i < nodes; ++i) {
      if (!(until_[i] >= t)) {
        const int node = part.nodes[i];
        until_[i] = EarliestOnNode(node, g, ChargeOn(request, node, g), seconds, t, limit);
      }
    }
    sorted = until_;
    std::nth_element(sorted.begin(), sorted.begin() + (whole - 1), sorted.end());
    const double tau = sorted[whole - 1];
    if (tau == kInfinity || tau > limit) return kInfinity;
    if (tau > t) {
      t = tau;  // no `whole` nodes are free together before tau
      continue;
    }
    // At t, at least `whole` nodes are completely free throughout the window.
    int free_nodes = 0;
    for (int i = 0; i < nodes; ++i) free_nodes += until_[i] == t;
    if (remainder == 0 || free_nodes > whole) return t;
    // (A node free for G GPUs and their charge also takes the remainder's smaller charge.)
    for (int i = 0; i < nodes; ++i) {
      const int node = part.nodes[i];
      if (until_[i] != t &&
          NodeHolds(node, remainder, ChargeOn(request, node, remainder), t, seconds)) {
        return t;
      }
    }
    double next = kInfinity;
    for (int node : part.nodes) {
      next = std::min(next, profiles_[node].NextBreakpoint(t));
      if (host_) {
        next = std::min({next, cpu_profiles_[node].NextBreakpoint(t),
                         memory_profiles_[node].NextBreakpoint(t)});
      }
    }
    t = next;
  }
  return kInfinity;
}

double Conservative::EarliestOnNodes(const PlacementRequest& request, double seconds,
                                     double from, double limit) {
  double best = limit;
  if (!type_profiles_.empty() && request.gpus > 0) {
    // `pool` spreads a job over any nodes of one type: enough free GPUs of the type throughout
    // the window is what is necessary (the node profiles' CPUs and memory are checked by FindAt).
    for (int type : cluster_->gpu_types()) {
      if (!request.AllowsType(type)) continue;
      best = std::min(best, type_profiles_[type].EarliestSlot(request.gpus, seconds, from, best));
      if (best == from) return best;
    }
    return best;
  }
  for (const Partition& part : scratch_->partitions()) {
    if (!request.AllowsType(part.gpu_type)) continue;
    if (request.gpus <= part.gpus_per_node) {
      for (int node : part.nodes) {
        best = std::min(best, EarliestOnNode(node, request.gpus,
                                             ChargeOn(request, node, request.gpus), seconds,
                                             from, best));
        if (best == from) return best;
      }
    } else {
      best = std::min(best, EarliestAcross(request, part, seconds, from, best));
    }
  }
  return best;
}

double Conservative::NextBreakpointOnNodes(const PlacementRequest& request, double t) {
  double next = kInfinity;
  for (const Partition& part : scratch_->partitions()) {
    if (!request.AllowsType(part.gpu_type)) continue;
    for (int node : part.nodes) {
      next = std::min(next, profiles_[node].NextBreakpoint(t));
      if (host_) {
        next = std::min({next, cpu_profiles_[node].NextBreakpoint(t),
                         memory_profiles_[node].NextBreakpoint(t)});
      }
    }
  }
  return next;
}

bool Conservative::PlaceOnNodes(SchedulingContext& context, JobId id, double not_before,
                                double before) {
  const PlacementRequest& request = context.run(id).request;
  const double seconds = rule_.Planned(context.job(id));
  Allocation allocation;
  double t = not_before;
  const NowFit now_fit = t == context.now() && t < before
                             ? FindNow(context, request, seconds, &allocation)
                             : NowFit::kUnknown;
  while (now_fit != NowFit::kFits) {
    t = EarliestOnNodes(request, seconds, t, before);
    if (!(t < before)) {
      if (before < kInfinity) return false;
      // Failed GPUs (held until a repair no one can foresee) keep it out: retried each pass.
      unplaced_.push_back(id);
      return false;
    }
    // With first-fit and best-fit the test above is exact and this always succeeds; another
    // strategy may refuse: try the next time at which some node gains GPUs.
    if (FindAt(context, request, t, seconds, &allocation)) break;
    t = NextBreakpointOnNodes(request, t);
  }
  Slot slot;
  slot.start = t;
  slot.end = t + seconds;
  slot.type = allocation.gpu_type;
  slot.gpus = request.gpus;
  const Cluster& cluster = context.cluster();
  if (allocation.gpus.empty()) {
    slot.units.emplace_back(allocation.node, 0);  // a CPU-only job: its node's CPUs and memory
  }
  for (int g : allocation.gpus) {  // ascending, so nodes ascending
    const int node = cluster.NodeOfGpu(g);
    if (slot.units.empty() || slot.units.back().first != node) slot.units.emplace_back(node, 0);
    ++slot.units.back().second;
  }
  if (host_) {
    for (const auto& [node, gpus] : slot.units) slot.charges.push_back(ChargeOn(request, node, gpus));
  }
  Reserve(context, id, std::move(slot));
  return true;
}

void Conservative::Bump(SchedulingContext& context, int node) {
  const double now = context.now();
  if (profiles_[node].MinOver(now, kInfinity) >= 0 &&
      (!host_ || (cpu_profiles_[node].MinOver(now, kInfinity) >= 0 &&
                  memory_profiles_[node].MinOver(now, kInfinity) >= 0))) {
    return;
  }
  // Re-placed in submission order around everything else (they may move later: promises are
  // estimates once a job runs past its plan or GPUs fail).
  std::vector<JobId> jobs;
  for (const auto& entry : node_jobs_[node]) jobs.push_back(entry.second);
  std::sort(jobs.begin(), jobs.end());  // submission order
  for (JobId id : jobs) Unreserve(id);
  for (JobId id : jobs) PlaceOnNodes(context, id, context.now());
  freed_since_compression_ = true;
}

void Conservative::SyncFailedGpus(SchedulingContext& context) {
  if (context.failed_gpus_version() == failed_version_) return;
  failed_version_ = context.failed_gpus_version();
  std::vector<int> failed(failed_on_node_.size(), 0);
  const Cluster& cluster = context.cluster();
  for (int g : context.failed_gpus()) ++failed[cluster.NodeOfGpu(g)];
  const double now = context.now();
  std::vector<int> bumped;
  for (size_t node = 0; node < failed.size(); ++node) {
    const int delta = failed[node] - failed_on_node_[node];
    if (delta == 0) continue;
    // Failed GPUs are held from now on: nobody knows when they come back.
    profiles_[node].Add(now, kInfinity, -delta);
    if (!type_profiles_.empty()) {
      type_profiles_[cluster.node(static_cast<int>(node)).gpu_type].Add(now, kInfinity, -delta);
    }
    SetFree(*mirror_, mirror_free_, static_cast<int>(node), mirror_free_[node] - delta);
    failed_on_node_[node] = failed[node];
    if (delta > 0) {
      bumped.push_back(static_cast<int>(node));
    } else {
      freed_since_compression_ = true;  // a repair: reservations may move earlier
      compress_ = true;
    }
  }
  for (int node : bumped) Bump(context, node);
}

// ---- both ----

void Conservative::OnCompletion(SchedulingContext& context, JobId id) {
  auto it = running_.find(id);
  if (it == running_.end()) return;
  const Slot& slot = it->second;
  if (context.now() < slot.end) {
    Apply(slot, context.now(), +1);
    freed_since_compression_ = true;
  }
  if (by_nodes_) {
    MirrorAdd(slot, +1);
    running_ends_.erase(std::make_pair(slot.end, id));
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
    Slot slot = reserved_[id];
    Unreserve(id);
    Allocation allocation;
    bool placed = false;
    if (by_nodes_) {
      // On its reserved nodes, the lowest-index free GPUs (what first-fit and best-fit take
      // within a node). They are free unless a job ran past its plan or GPUs failed.
      // Under host limits their CPUs and memory too.
      const Resources& live = context.resources();
      placed = true;
      for (size_t i = 0; i < slot.units.size() && placed; ++i) {
        const int node = slot.units[i].first;
        placed = live.free_gpus(node) >= slot.units[i].second &&
                 (slot.charges.empty() || live.HostFits(node, slot.charges[i]));
      }
      if (placed) {
        allocation.gpu_type = slot.type;
        for (const auto& [node, gpus] : slot.units) {
          live.AppendLowestFreeGpus(node, gpus, &allocation.gpus);
        }
        if (allocation.gpus.empty()) allocation.node = slot.units.front().first;  // CPU-only
      }
    } else {
      placed = StartCounting(context, id, slot, &allocation);
    }
    if (!placed) {
      // Counting: the GPUs are free in number but fragmented across nodes; re-placed from the
      // type's next breakpoint. Per node: re-placed from now, or from the next breakpoint if
      // that already failed in this pass.
      const uint64_t before = failed[id];
      failed[id] |= by_nodes_ ? 1 : uint64_t{1} << slot.type;
      Place(context, id, failed[id],
            by_nodes_ && before != 0
                ? NextBreakpointOnNodes(context.run(id).request, now)
                : now);
      freed_since_compression_ = true;  // its old slot is free for others
      continue;
    }
    context.Start(id, std::move(allocation));
    slot.start = now;
    const double planned_end = slot.end;
    slot.end = rule_.EstimatedEnd(context, id);
    // Without a requested wall time the estimate is the true end, which on a faster GPU (runtime
    // model `hardware`) is before the planned one: the capacity freed is used at the next
    // completion's compression.
    if (slot.end < now + rule_.Planned(context.job(id))) freed_since_compression_ = true;
    Apply(slot, now, -1);
    if (by_nodes_) {
      MirrorAdd(slot, -1);
      running_ends_.emplace(slot.end, id);
    }
    running_[id] = slot;
    // Longer than planned (a slower GPU): the reservations on its nodes that counted on the
    // planned end move.
    if (by_nodes_ && slot.end > planned_end) {
      for (const auto& unit : running_[id].units) Bump(context, unit.first);
    }
  }
}

void Conservative::Schedule(SchedulingContext& context) {
  if (profiles_.empty()) Init(context);
  const double now = context.now();
  if (by_nodes_) {
    // Queries start at now wherever the first key is, so the past is dropped only now and then
    // (it only costs memory): every kTrimPasses passes.
    if (++passes_ % kTrimPasses == 0) {
      for (auto* profiles : {&profiles_, &cpu_profiles_, &memory_profiles_, &type_profiles_}) {
        for (Profile& profile : *profiles) profile.Trim(now);
      }
    }
    SyncFailedGpus(context);
  } else {
    for (int type : context.cluster().gpu_types()) profiles_[type].Trim(now);
  }
  if (compress_) {
    // Submission order; each job is re-placed around everything else, later jobs included, and
    // can only move earlier (its old slot is still free to it).
    bool moved = false;
    for (JobId id = context.QueueFront(); id != kNoJob; id = context.QueueNext(id)) {
      auto it = reserved_.find(id);
      if (it == reserved_.end()) continue;  // arrived at this timestamp: placed below
      Slot old = it->second;
      Unreserve(id);
      if (by_nodes_) {
        // Only to an earlier start; else it keeps its slot (and its nodes).
        if (PlaceOnNodes(context, id, now, old.start)) {
          moved = true;
        } else {
          Reserve(context, id, std::move(old));
        }
        continue;
      }
      Place(context, id, 0, now);
      auto placed = reserved_.find(id);
      moved = moved || placed == reserved_.end() || placed->second.start != old.start ||
              placed->second.units != old.units;
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
  for (JobId id : waiting) Place(context, id, 0, now);
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
