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
// (policies/backfill.h); bf_interval (0): compression at most every bf_interval seconds;
// bf_max_job_test (0 = no cap): at most that many waiting jobs hold a reservation (below).
//
// The availability profile is a step function of free GPUs over time per unit (see Profile):
// - With a placement that ignores nodes (`pool`), no host limits and no job with tensor-parallel
//   groups (each must share a node), a unit is a GPU type, and GPUs are counted. A
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
// With bf_interval = I > 0 (docs/backfilling.md#deep-queues-bf_interval) a timestamp with
// completions compresses only if the last compression is at least I seconds old; otherwise the
// compression waits for a pass at the last one + I (a timer), completions or not. Jobs only ever
// move earlier, so every promise still holds; room freed meanwhile waits. On a deep queue this
// bounds the compressions to one per I seconds of simulated time.
//
// With bf_max_job_test = K > 0 (docs/backfilling.md#deep-queues-bf_max_job_test) at most K
// waiting jobs hold a reservation or are retried for one, as Slurm's backfill tests at most
// bf_max_job_test jobs. The others wait without one (wait reason policy_hold) and are admitted
// in submission order (lowest JobId first) whenever fewer than K hold one: at a pass, after the
// arrivals, and again after the due jobs started, so a job admitted with room now starts in that
// pass. A job's first reservation, made at its admission, is its promise, and it holds as
// without a cap; a job admitted later never takes a slot from one admitted before. Compression,
// holes and the gap index see only the admitted jobs, so a pass costs what a queue K deep costs.
//
// Compression runs at a timestamp with completions only if the profile gained capacity since the
// last one (a job ended before its estimated end, started with an estimate shorter than planned,
// was moved by the last compression, left its slot because its placement failed, or GPUs were
// repaired): otherwise every reservation is already the earliest slot around the others and
// compressing would move nothing (a job ending exactly at its estimate frees nothing the profile
// did not count). Counting, a job is re-placed at its earliest slot (its type may change at the
// same start); per node, it keeps its slot unless one starts earlier.
//
// The fast paths, with first-fit and best-fit (type_order=listed) per node, without host limits,
// for jobs without placement constraints (locality, node limits) that fit on one node of every
// partition they may use (the same reservations, found without searching every node;
// policies/availability_profile.h); everything else takes the search described above:
// - a gap index per partition: for every level g (1..GPUs per node) the maximal intervals in
//   which a node has at least g GPUs free, indexed across the nodes by start. The earliest slot
//   of a job of g GPUs for s seconds is one query; at that time t (later than now) the nodes
//   with room are those whose gap starts exactly at t, among which the rule picks. A job that
//   fits now takes the lowest node with room now (first-fit), visiting only nodes with enough
//   GPUs free now;
// - compression driven by holes: every window in which a node's profile gained capacity (a job
//   ended before its estimate or started with a shorter one, a reservation moved or was given
//   up, a repair) is a hole, numbered. A reservation was the earliest slot when it was last
//   placed or checked, so it can move earlier only into room that a later hole made: a window
//   of its length inside a gap (of its level, or of a whole node or its remainder for a job
//   wider than a node) that overlaps the hole, starting before its reservation. Per request
//   class the waiting jobs are kept in submission order with a min-tree of their planned run
//   times and a max-tree of their reservation starts, so the jobs a hole could serve (short
//   enough, reserved after the gap's start) are found without visiting the others. They are
//   checked in submission order exactly as the walk over every waiting job checks them; a job
//   that moves leaves a hole for the jobs after it (and, at the next compression, before it).
//   Jobs placed from a later time than now (a start that failed twice in a pass) are checked at
//   the next compression whatever the holes.
// Cost of a pass, for P breakpoints in a unit's profile (P <= 2 x (running + waiting jobs on the
// unit) + 1; a reservation or release costs O(log P) per unit it holds):
// - counting: placing a job is O(log P) per stretch of too-few GPUs it must skip; a pass costs
//   O((arrivals + starts) x log P), plus O(waiting x log P) when it compresses;
// - per node, for N nodes of the job's types: a job that fits now costs two Finds of the
//   placement on a mirror of the cluster now plus O(log P) per node with a reservation in its
//   window; otherwise placing it is O(N x log P) per node stretch it skips (each node is searched
//   only up to the best start found so far) plus O(N x log P) for the window's free counts and
//   one Find. A pass costs that per arrival, plus O(nodes held x log P) per start, plus that per
//   waiting job when it compresses (bounded by the job's current start);
// - with the fast paths, a job of one node costs O(partitions x log gaps) to place (plus the
//   nodes with room now that a reservation will take within its window, when it fits now), and
//   a release or reservation O(GPUs per node + keys of the gaps it touches) per node to keep the
//   index; a compression costs O(log waiting) per job a hole could serve, plus a placement per
//   such job. Measured on deep queues in bench/README.md.
#include <algorithm>
#include <cmath>
#include <map>
#include <queue>
#include <set>
#include <unordered_map>

#include "policies/active_slot_map.h"
#include "policies/availability_profile.h"
#include "policies/backfill.h"
#include "policies/registry.h"
#include "sim/util/error.h"
#include "sim/util/index_set.h"

namespace clustersim {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// The end of a plan of `seconds` from `start`. A job planned to run 0 seconds (a wall time of
// 0, or a zero duration planned exactly) holds its GPUs for an instant: until the next
// representable time after `start`, so that no other plan overlaps its start
// (docs/backfilling.md#reservations-are-placements-at-a-future-time).
double PlanEnd(double start, double seconds) {
  const double end = start + seconds;
  return end > start ? end : std::nextafter(start, kInfinity);
}

using Profile = AvailabilityProfile;

class Conservative final : public Policy {
 public:
  static constexpr const char* kHelp =
      "bf_interval (0): compress the reservations at most every bf_interval seconds, as Slurm's "
      "backfill runs every bf_interval (0 = at every timestamp with completions, the reference "
      "simulators' rule; docs/backfilling.md#deep-queues-bf_interval)\n"
      "                           bf_max_job_test (0 = no cap): at most this many waiting jobs "
      "hold a reservation, the first in submission order; the others wait without one, as "
      "Slurm's backfill tests at most bf_max_job_test jobs "
      "(docs/backfilling.md#deep-queues-bf_max_job_test)\n"
      "                           walltime (trace): trace | exact | a factor of the duration, as "
      "for easy";

  Conservative(WalltimeRule rule, double bf_interval, int bf_max_job_test)
      : rule_(rule), bf_interval_(bf_interval), bf_max_job_test_(bf_max_job_test) {}

  void Schedule(SchedulingContext& context) override;
  void OnArrival(SchedulingContext& /*context*/, JobId id) override { arrivals_.push_back(id); }
  void OnCompletion(SchedulingContext& context, JobId id) override;
  // Its slot is freed as at a completion; it gets a new reservation at the next pass.
  void OnRequeue(SchedulingContext& context, JobId id) override {
    OnCompletion(context, id);
    arrivals_.push_back(id);
  }
  void OnTimer(SchedulingContext& context, JobId /*id*/, int tag) override {
    if (tag != kCompressionTimer) timers_.erase(context.now());
  }
  double RequestedWalltime(const Job& job) const override { return rule_.Requested(job); }
  bool KeepsPromises() const override { return true; }
  bool PlacesMig() const override { return false; }  // docs/mig.md
  void BeforeRun(const Trace& trace, uint64_t seed) override {
    rule_.Prepare(trace, seed);
    tensor_groups_ = std::any_of(trace.jobs.begin(), trace.jobs.end(),
                                 [](const Job& job) { return job.tensor_parallel > 1; });
  }
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
  // Gives the reservation's GPUs back to the profiles unless `give_back` is false (the caller
  // then accounts for them).
  void Unreserve(const SchedulingContext& context, JobId id, bool give_back = true);
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

  // ---- per node, the fast paths (first-fit and best-fit with type_order=listed) ----
  // Adds `delta` free GPUs over [start, end) to `node`'s profile, keeping the gap index in step.
  void AddToNode(int node, double start, double end, int delta);
  // Brings the gap index up to date with the profiles (see AddToNode).
  void FlushGaps();
  // True if every partition the request may use takes it on one node.
  bool SingleNodeOnly(const PlacementRequest& request) const;
  // PlaceOnNodes for such a request, by the gap index instead of a search of every node:
  // 1 placed, 0 no slot before `before`, -1 not decided here (take the general path).
  int PlaceSingleNode(SchedulingContext& context, JobId id, const PlacementRequest& request,
                      double seconds, double not_before, double before);
  // FindNow for first-fit: the lowest-index node with room now (visiting only nodes with enough
  // GPUs free now); -1 if none.
  int FirstFitNow(const SchedulingContext& context, const PlacementRequest& request,
                  double seconds);
  // Compression driven by what was freed (see the file comment): the same moves as the walk
  // over every waiting job, visiting only the jobs that some freed window could take.
  void CompressByHoles(SchedulingContext& context);
  // A window [start, end) of `node` that gained capacity (a hole); `after`: only jobs after it in
  // submission order may still need to look at it in this compression.
  void RecordHoles(const Slot& slot, double start, double end, JobId after = kNoJob);
  void RecordHole(int node, double start, double end, JobId after = kNoJob);
  // The request class (GPUs, allowed types) of a job, and the waiting jobs of each class in
  // submission order with their planned run times (for the compression's candidate search).
  int ClassOf(const SchedulingContext& context, JobId id);
  // A waiting job's planned seconds and reservation start in its stream; (+infinity,
  // -infinity): not waiting.
  void SetWaiting(JobId id, double planned_seconds, double start);

  Placement::SingleNodeRule rule_fast_ = Placement::SingleNodeRule::kOther;
  std::vector<GapIndex> gaps_;  // by partition (Resources::partitions())
  std::vector<std::pair<double, double>> dirty_;  // by node: range changed since the last flush
  std::vector<int> dirty_nodes_;
  // Jobs in (after, before) in submission order may still need to look at a hole: a hole a
  // compression's move left is looked at by the jobs after the mover in that compression and by
  // those before it at the next (the others saw it).
  struct Hole {
    int node;
    double start, end;
    uint64_t seq;
    JobId after;
    JobId before;
  };
  std::vector<Hole> holes_;  // since the last compression, and those its moves left
  uint64_t hole_seq_ = 0;
  std::vector<uint64_t> checked_seq_;  // by job: hole_seq_ when its slot was last the earliest
  std::vector<JobId> always_check_;    // placed from a time after now: checked at compression
  struct Stream {
    int gpus;
    uint64_t type_mask;
    std::vector<JobId> ids;  // ascending
    std::vector<double> tree;  // min-tree of planned seconds over ids (+inf: not waiting)
    std::vector<double> latest;  // max-tree of reservation starts over ids (-inf: not waiting)
    int leaves = 1;
  };
  std::map<std::pair<int, uint64_t>, int> class_ids_;
  std::vector<Stream> streams_;
  std::vector<int> class_of_;     // by job, -1 = none yet
  std::vector<int> stream_pos_;   // by job: position in its class's stream, -1 = none
  // The first position >= from in `stream` whose planned seconds are <= limit and whose
  // reservation starts after `after`, or -1. The subtrees that hold no planned time <= limit or
  // no start > after are skipped whole: the jobs reserved before a hole, however many, cost
  // O(log) per stretch of them, not one step each.
  static int FirstCandidate(const Stream& stream, double limit, double after, int from);
  // The first such position in the subtree of `node`, or -1.
  static int FirstCandidateIn(const Stream& stream, double limit, double after, int node);
  // Called when `stream` is full: drops the positions of jobs that ended and gives the trees
  // room for as many jobs again as it keeps, so a stream's size follows the jobs waiting or
  // running, not every job of its class the run has seen. (Never during a compression, whose
  // cursors hold positions: only a job reserved for the first time joins a stream, and a
  // compression re-places jobs reserved before.)
  void Rebuild(const SchedulingContext& context, Stream& stream);
  std::vector<int> units_;  // scratch

  WalltimeRule rule_;
  const Cluster* cluster_ = nullptr;
  bool by_nodes_ = false;          // the profile units are nodes (else GPU types)
  bool tensor_groups_ = false;     // a job of the trace has tensor-parallel groups
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
  ActiveSlotMap<Slot> reserved_;                   // waiting jobs' reservations
  std::set<std::pair<double, JobId>> by_start_;    // the same, by (start, id)
  ActiveSlotMap<Slot> running_;                    // [start, estimated end) of running jobs
  std::vector<JobId> arrivals_;                    // since the last pass
  std::vector<JobId> unplaced_;                    // no slot found (see Place); retried each pass
  std::set<double> timers_;                        // times with a pass requested (SetTimer)
  bool compress_ = false;                 // this timestamp had completions and something to gain
  bool freed_since_compression_ = false;  // the profile gained capacity since the last one
  // bf_interval > 0: a compression at most every bf_interval seconds. Completions since the
  // last one wait for it; a timer (tag kCompressionTimer) asks for the pass where it is due.
  static constexpr int kCompressionTimer = 1;
  double bf_interval_ = 0;
  double last_compression_ = -kInfinity;
  double compression_timer_ = -kInfinity;  // the time of the timer asked for last
  bool completions_pending_ = false;       // completions since the last compression
  // bf_max_job_test = K > 0: at most K waiting jobs hold a reservation (or are retried for one:
  // unplaced_); the others wait in `backlog_` without one and are admitted in submission order
  // (lowest JobId first) as reserved jobs start.
  int bf_max_job_test_ = 0;
  std::priority_queue<JobId, std::vector<JobId>, std::greater<>> backlog_;
  // Reservations held and jobs retried for one: what bf_max_job_test bounds.
  size_t Admitted() const { return by_start_.size() + unplaced_.size(); }
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
  // Running jobs by estimated end, a min-heap; an entry whose job no longer runs to that end is
  // dropped when it comes to the top (RunningPastEstimate), not when the job ends.
  std::priority_queue<std::pair<double, JobId>, std::vector<std::pair<double, JobId>>,
                      std::greater<>>
      running_ends_;
  // False while the top of running_ends_ is known to be a running job's: only an end makes an
  // entry stale (an entry pushed at a start is its job's).
  bool ends_stale_ = false;
  // True if a running job's estimated end is <= now (it outlived its estimate).
  bool RunningPastEstimate(const SchedulingContext& context, double now);
  std::vector<int> failed_on_node_;           // by node: failed GPUs held in its profile
  uint64_t failed_version_ = 0;
  std::vector<double> until_;                 // scratch for EarliestAcross
  std::vector<int> gpu_list_;                 // scratch for SetScratchFree
  static constexpr uint64_t kTrimPasses = 64;
  uint64_t passes_ = 0;
  double now_ = -kInfinity;           // the time of the last pass or completion
  std::vector<uint64_t> last_trim_;  // by node: the pass of its last trim
};

void Conservative::Init(const SchedulingContext& context) {
  const Cluster& cluster = context.cluster();
  cluster_ = &cluster;
  // Under host limits (CPUs, host memory) the units are nodes with every placement: CPUs and
  // memory are per node, so counting GPUs per type would promise what a node cannot give.
  host_ = context.resources().host_limited();
  // So too when a job's tensor-parallel groups must each share a node.
  by_nodes_ = !context.placement().IgnoresNodes() || host_ || tensor_groups_;
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
    last_trim_.assign(cluster.node_count(), 0);
    reserved_nodes_ = IndexSet(cluster.node_count());
    failed_on_node_.assign(cluster.node_count(), 0);
    mirror_.emplace(cluster);
    if (host_) mirror_->EnableHostLimits();
    mirror_free_ = scratch_free_;
    // The fast paths plan GPUs only: not under host limits (CPUs and memory per node over time).
    rule_fast_ = host_ ? Placement::SingleNodeRule::kOther : context.placement().single_node_rule();
    if (rule_fast_ != Placement::SingleNodeRule::kOther) {
      for (const Partition& part : scratch_->partitions()) {
        gaps_.emplace_back(static_cast<int>(part.nodes.size()), part.gpus_per_node);
      }
      dirty_.assign(cluster.node_count(), std::make_pair(kInfinity, -kInfinity));
    }
  } else {
    for (size_t type = 0; type < cluster.catalog().gpus().size(); ++type) {
      profiles_.emplace_back(cluster.GpusOfType(static_cast<int>(type)));
    }
  }
  empty_.emplace(context.resources());
}

void Conservative::Apply(const Slot& slot, double from, int sign) {
  if (!by_nodes_) {
    for (const auto& [unit, gpus] : slot.units) profiles_[unit].Add(from, slot.end, sign * gpus);
    return;
  }
  for (size_t i = 0; i < slot.units.size(); ++i) {
    const auto& [unit, gpus] = slot.units[i];
    if (gpus != 0) {
      AddToNode(unit, from, slot.end, sign * gpus);
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
  if (gpus > 0 && profiles_[node].MinOver(t, PlanEnd(t, seconds)) < gpus) return false;
  if (charge.cpu_milli > 0 &&
      cpu_profiles_[node].MinOver(t, PlanEnd(t, seconds)) < charge.cpu_milli) {
    return false;
  }
  return charge.memory_mib <= 0 ||
         memory_profiles_[node].MinOver(t, PlanEnd(t, seconds)) >= charge.memory_mib;
}

HostCharge Conservative::LeastHostFree(int node, double t, double seconds) const {
  return HostCharge{cpu_profiles_[node].MinOver(t, PlanEnd(t, seconds)),
                    memory_profiles_[node].MinOver(t, PlanEnd(t, seconds))};
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

void Conservative::AddToNode(int node, double start, double end, int delta) {
  if (passes_ >= last_trim_[node] + kTrimPasses) {
    last_trim_[node] = passes_;
    profiles_[node].Trim(now_);
    if (!gaps_.empty()) {
      auto& [lo, hi] = dirty_[node];
      if (lo > hi) {
        // Its gaps are current: drop their past as the profile did.
        gaps_[scratch_->partition_of(node)].Trim(scratch_->position_of(node), profiles_[node],
                                                 now_);
      } else {
        // Its gaps catch up at the next query, recomputed from the profile's first key on over
        // a range reaching now (which drops their past as Trim would): with an empty queue there
        // may be no query for a long time, and a node then changes many times for one catch-up.
        lo = -kInfinity;
        hi = std::max(hi, now_);
      }
    }
  }
  profiles_[node].Add(start, end, delta);
  if (gaps_.empty() || !(start < end)) return;
  // The gap index catches up at the next query (FlushGaps): a node that changes several times
  // in between, as at every start (reservation, release, running slot), is walked once.
  auto& [lo, hi] = dirty_[node];
  if (lo > hi) dirty_nodes_.push_back(node);
  lo = std::min(lo, start);
  hi = std::max(hi, end);
}

void Conservative::FlushGaps() {
  for (int node : dirty_nodes_) {
    auto& [lo, hi] = dirty_[node];
    gaps_[scratch_->partition_of(node)].Update(scratch_->position_of(node), profiles_[node], lo,
                                               hi);
    lo = kInfinity;
    hi = -kInfinity;
  }
  dirty_nodes_.clear();
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
  if (!gaps_.empty()) {
    ClassOf(context, id);
    SetWaiting(id, rule_.Planned(context.job(id)), slot.start);
  }
  // Wait reasons (docs/metrics.md#wait-reasons), stated at every (re)placement: a job whose slot
  // is later although it fits now waits for other jobs' reservations; else for what stops it now.
  if (slot.start > now) {
    context.SetWaitReason(id, context.NoFitReason(id).value_or(WaitReason::kReservation));
  }
  reserved_.Insert(context, id) = std::move(slot);
}

void Conservative::Unreserve(const SchedulingContext& context, JobId id, bool give_back) {
  const Slot& slot = reserved_.At(context, id);
  if (give_back) Apply(slot, slot.start, +1);
  if (by_nodes_) {
    for (const auto& unit : slot.units) {
      node_jobs_[unit.first].erase(std::make_pair(slot.start, id));
      if (node_jobs_[unit.first].empty()) reserved_nodes_.Erase(unit.first);
    }
  }
  by_start_.erase(std::make_pair(slot.start, id));
  reserved_.Erase(context, id);
  if (!gaps_.empty()) SetWaiting(id, kInfinity, -kInfinity);
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
  const PlacementRequest& request = context.active(id).request;
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
  best.end = PlanEnd(best.start, seconds);
  best.gpus = request.gpus;
  best.units.emplace_back(best.type, best.gpus);
  Reserve(context, id, std::move(best));
}

bool Conservative::StartCounting(SchedulingContext& context, JobId id, const Slot& slot,
                                 Allocation* allocation) {
  return context.placement().Find(context.resources(),
                                  OnType(context.active(id).request, slot.type), allocation);
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
  if (RunningPastEstimate(context, now)) return NowFit::kUnknown;
  // The mirror counts GPUs per node: a job with a spread rule takes its group's domains from the
  // live state (docs/spreading.md).
  if (!context.resources().spread_rule(request.constraint).empty()) {
    mirror_->CopySpreadFrom(context.resources());
  }
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
    if (!(node_jobs_[node].begin()->first < PlanEnd(now, seconds))) continue;
    const int least =
        std::clamp(profiles_[node].MinOver(now, PlanEnd(now, seconds)), 0, spec.gpu_count);
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
  // Jobs of a spread group are kept out of the domains their group holds now (the plan does not
  // know which of them end before t; a start is always checked on the live state).
  if (!context.resources().spread_rule(request.constraint).empty()) {
    scratch_->CopySpreadFrom(context.resources());
  }
  for (const Partition& part : scratch_->partitions()) {
    if (!request.AllowsType(part.gpu_type)) continue;
    for (int node : part.nodes) {
      const int least = profiles_[node].MinOver(t, PlanEnd(t, seconds));
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
  const PlacementRequest& request = context.active(id).request;
  const double seconds = rule_.Planned(context.job(id));
  if (!gaps_.empty()) {
    if (not_before > context.now()) always_check_.push_back(id);
    if (static_cast<size_t>(id) >= checked_seq_.size()) {
      checked_seq_.resize(std::max<size_t>(id + 1, 2 * checked_seq_.size()), 0);
    }
    checked_seq_[id] = hole_seq_;  // what it sees now is every hole so far
    if (SingleNodeOnly(request)) {
      const int placed = PlaceSingleNode(context, id, request, seconds, not_before, before);
      if (placed >= 0) return placed == 1;
    }
  }
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
  slot.end = PlanEnd(t, seconds);
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
  for (JobId id : jobs) {
    const Slot& slot = reserved_.At(context, id);
    RecordHoles(slot, slot.start, slot.end);
    Unreserve(context, id);
  }
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
    AddToNode(static_cast<int>(node), now, kInfinity, -delta);
    if (delta < 0) RecordHole(static_cast<int>(node), now, kInfinity);
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

// ---- per node: the fast paths ----

bool Conservative::SingleNodeOnly(const PlacementRequest& request) const {
  // A request with placement constraints (data locality, a node limit) is not placed by the
  // single-node rule alone.
  if (request.gpus <= 0 || request.whole_nodes || request.constraint != 0) return false;
  bool any = false;
  for (const Partition& part : scratch_->partitions()) {
    if (!request.AllowsType(part.gpu_type)) continue;
    if (request.gpus > part.gpus_per_node) return false;
    any = true;
  }
  return any;
}

int Conservative::FirstFitNow(const SchedulingContext& context, const PlacementRequest& request,
                              double seconds) {
  // The state FindNow builds: a node keeps its free GPUs of now unless a reservation on it
  // starts within the window, then it has the least its profile has there. Only nodes with
  // enough free now can have enough then; the lowest such node with enough wins.
  const double now = context.now();
  int best = -1;
  const auto& partitions = mirror_->partitions();
  for (size_t p = 0; p < partitions.size(); ++p) {
    const Partition& part = partitions[p];
    if (!request.AllowsType(part.gpu_type)) continue;
    for (int pos = part.free_tree.FindFirstAtLeast(request.gpus, 0); pos >= 0;
         pos = part.free_tree.FindFirstAtLeast(request.gpus, pos + 1)) {
      const int node = part.nodes[pos];
      if (best >= 0 && node > best) break;
      if (!node_jobs_[node].empty() && node_jobs_[node].begin()->first < PlanEnd(now, seconds)) {
        const int least =
            std::clamp(profiles_[node].MinOver(now, PlanEnd(now, seconds)), 0, part.gpus_per_node);
        if (least < request.gpus) continue;
      }
      best = node;
      break;
    }
  }
  return best;
}

int Conservative::PlaceSingleNode(SchedulingContext& context, JobId id,
                                  const PlacementRequest& request, double seconds,
                                  double not_before, double before) {
  const double now = context.now();
  const Cluster& cluster = context.cluster();
  double t = not_before;
  int node = -1;
  if (t == now && t < before) {
    if (RunningPastEstimate(context, now)) return -1;  // kUnknown
    if (rule_fast_ == Placement::SingleNodeRule::kLowestIndex) {
      node = FirstFitNow(context, request, seconds);
    } else {
      Allocation allocation;
      const NowFit fit = FindNow(context, request, seconds, &allocation);
      if (fit == NowFit::kUnknown) return -1;
      if (fit == NowFit::kFits) node = cluster.NodeOfGpu(allocation.gpus.front());
    }
  }
  if (node < 0) {
    FlushGaps();
    const auto& partitions = scratch_->partitions();
    t = kInfinity;
    for (size_t p = 0; p < partitions.size(); ++p) {
      if (!request.AllowsType(partitions[p].gpu_type)) continue;
      t = std::min(t, gaps_[p].Earliest(request.gpus, seconds, not_before));
    }
    if (!(t < before)) {
      if (before < kInfinity) return 0;
      unplaced_.push_back(id);  // failed GPUs keep it out: retried each pass
      return 0;
    }
    // At an earliest t after not_before, the nodes with room are those whose gap starts at t.
    if (!(t > not_before)) return -1;
    int best_free = 0;
    for (size_t p = 0; p < partitions.size(); ++p) {
      const Partition& part = partitions[p];
      if (!request.AllowsType(part.gpu_type)) continue;
      units_.clear();
      gaps_[p].UnitsStartingAt(request.gpus, t, seconds, &units_);
      for (int unit : units_) {
        const int candidate = part.nodes[unit];
        if (rule_fast_ == Placement::SingleNodeRule::kLowestIndex) {
          if (node < 0 || candidate < node) node = candidate;
          continue;
        }
        const int free =
            std::clamp(profiles_[candidate].MinOver(t, PlanEnd(t, seconds)), 0, part.gpus_per_node);
        if (node < 0 || free < best_free || (free == best_free && candidate < node)) {
          node = candidate;
          best_free = free;
        }
      }
    }
    CHECK(node >= 0, "conservative: no node has the earliest slot the gap index found");
  }
  Slot slot;
  slot.start = t;
  slot.end = PlanEnd(t, seconds);
  slot.type = cluster.node(node).gpu_type;
  slot.gpus = request.gpus;
  slot.units.emplace_back(node, request.gpus);
  Reserve(context, id, std::move(slot));
  return 1;
}

void Conservative::RecordHoles(const Slot& slot, double start, double end, JobId after) {
  for (const auto& unit : slot.units) RecordHole(unit.first, start, end, after);
}

void Conservative::RecordHole(int node, double start, double end, JobId after) {
  if (gaps_.empty() || !(start < end)) return;
  holes_.push_back(Hole{node, start, end, ++hole_seq_, after, std::numeric_limits<JobId>::max()});
}

int Conservative::ClassOf(const SchedulingContext& context, JobId id) {
  if (static_cast<size_t>(id) >= class_of_.size()) {
    const size_t size = std::max<size_t>(id + 1, 2 * class_of_.size());
    class_of_.resize(size, -1);
    stream_pos_.resize(size, -1);
  }
  if (class_of_[id] >= 0) return class_of_[id];
  const PlacementRequest& request = context.active(id).request;
  const auto key = std::make_pair(request.gpus, request.type_mask);
  auto it = class_ids_.find(key);
  if (it == class_ids_.end()) {
    it = class_ids_.emplace(key, static_cast<int>(streams_.size())).first;
    Stream stream;
    stream.gpus = request.gpus;
    stream.type_mask = request.type_mask;
    stream.tree.assign(2, kInfinity);
    stream.latest.assign(2, -kInfinity);
    streams_.push_back(std::move(stream));
  }
  class_of_[id] = it->second;
  Stream& stream = streams_[it->second];
  // Ids come in increasing order but for requeued jobs, which keep their first position.
  if (stream_pos_[id] < 0) {
    CHECK(stream.ids.empty() || stream.ids.back() < id, "conservative: class stream out of order");
    if (static_cast<int>(stream.ids.size()) == stream.leaves) Rebuild(context, stream);
    stream_pos_[id] = static_cast<int>(stream.ids.size());
    stream.ids.push_back(id);
  }
  return it->second;
}

void Conservative::Rebuild(const SchedulingContext& context, Stream& stream) {
  // Jobs that ended or were rejected never wait again: their positions go. The order of the
  // others is kept, and with it every search's answer.
  size_t kept = 0;
  for (size_t pos = 0; pos < stream.ids.size(); ++pos) {
    const JobId job = stream.ids[pos];
    const JobState state = context.run(job).state;
    if (Ended(state) || state == JobState::kRejected) {
      stream_pos_[job] = -1;
      continue;
    }
    stream.ids[kept] = job;
    stream.tree[stream.leaves + kept] = stream.tree[stream.leaves + pos];
    stream.latest[stream.leaves + kept] = stream.latest[stream.leaves + pos];
    stream_pos_[job] = static_cast<int>(kept);
    ++kept;
  }
  stream.ids.resize(kept);
  // Room for as many jobs again as are kept, and the one coming.
  int leaves = 1;
  while (leaves < 2 * static_cast<int>(kept) + 1) leaves *= 2;
  std::vector<double> tree(2 * leaves, kInfinity);
  std::vector<double> latest(2 * leaves, -kInfinity);
  for (size_t pos = 0; pos < kept; ++pos) {
    tree[leaves + pos] = stream.tree[stream.leaves + pos];
    latest[leaves + pos] = stream.latest[stream.leaves + pos];
  }
  for (int i = leaves - 1; i >= 1; --i) {
    tree[i] = std::min(tree[2 * i], tree[2 * i + 1]);
    latest[i] = std::max(latest[2 * i], latest[2 * i + 1]);
  }
  stream.leaves = leaves;
  stream.tree = std::move(tree);
  stream.latest = std::move(latest);
}

void Conservative::SetWaiting(JobId id, double planned_seconds, double start) {
  if (static_cast<size_t>(id) >= class_of_.size() || class_of_[id] < 0) return;
  CHECK(stream_pos_[id] >= 0, "conservative: a job that ended holds a reservation");
  Stream& stream = streams_[class_of_[id]];
  int i = stream.leaves + stream_pos_[id];
  stream.tree[i] = planned_seconds;
  stream.latest[i] = start;
  for (i /= 2; i >= 1; i /= 2) {
    stream.tree[i] = std::min(stream.tree[2 * i], stream.tree[2 * i + 1]);
    stream.latest[i] = std::max(stream.latest[2 * i], stream.latest[2 * i + 1]);
  }
}

int Conservative::FirstCandidateIn(const Stream& stream, double limit, double after, int node) {
  if (stream.tree[node] > limit || !(stream.latest[node] > after)) return -1;
  while (node < stream.leaves) {
    // Both halves may pass the subtree test; the left one may still hold no leaf that passes
    // both (its short jobs reserved early, its late ones long).
    const int left = FirstCandidateIn(stream, limit, after, 2 * node);
    if (left >= 0) return left;
    node = 2 * node + 1;
    if (stream.tree[node] > limit || !(stream.latest[node] > after)) return -1;
  }
  return node - stream.leaves;
}

int Conservative::FirstCandidate(const Stream& stream, double limit, double after, int from) {
  const int size = static_cast<int>(stream.ids.size());
  if (from >= size) return -1;
  int i = stream.leaves + from;
  if (stream.tree[i] <= limit && stream.latest[i] > after) return from;
  // Climb; at each left child, search its right sibling's subtree.
  for (; i > 1; i >>= 1) {
    if (i & 1) continue;
    const int found = FirstCandidateIn(stream, limit, after, i + 1);
    if (found >= 0) return found;  // (positions past the last job hold no candidate)
  }
  return -1;
}

void Conservative::CompressByHoles(SchedulingContext& context) {
  const double now = context.now();
  // A cursor walks the waiting jobs of one class that one hole, at one level, might let start
  // earlier: jobs planned to fit in the gap of that level around the hole and reserved after its
  // start. The gap is measured again at every step, so a cursor stops once others took its room.
  struct Cursor {
    JobId next;
    size_t hole;
    int level;
    int stream;
    int pos;
    bool operator>(const Cursor& other) const { return next > other.next; }
  };
  std::priority_queue<Cursor, std::vector<Cursor>, std::greater<Cursor>> cursors;
  const auto& partitions = scratch_->partitions();
  // Advances `c` to the next job at or after position c.pos; pushes it if there is one.
  auto advance = [&](Cursor c) {
    // No waiting job of the class after the cursor (jobs not waiting hold +infinity): nothing
    // to measure, and the gap index need not catch up.
    if (FirstCandidate(streams_[c.stream], std::numeric_limits<double>::max(), -kInfinity, c.pos) <
        0) {
      return;
    }
    FlushGaps();
    const Hole& hole = holes_[c.hole];
    const int p = scratch_->partition_of(hole.node);
    const int unit = scratch_->position_of(hole.node);
    double room = -kInfinity;     // the longest window a gap around the hole offers
    double earliest = kInfinity;  // the earliest start one offers
    gaps_[p].ForEachGapOverlapping(unit, c.level, hole.start, hole.end, [&](double a, double b) {
      const double from = std::max(a, now);
      if (!(b > from)) return;
      room = std::max(room, b - from);
      earliest = std::min(earliest, from);
    });
    if (room == -kInfinity) return;
    const Stream& stream = streams_[c.stream];
    // A window of `seconds` fits a gap [from, b) when b >= from + seconds; compared with slack.
    // (Jobs not waiting hold +infinity in the stream: the limit stays finite.)
    const double limit =
        std::min(room * (1 + 1e-12) + 1e-3, std::numeric_limits<double>::max());
    // Only a job reserved after the earliest start the gaps offer can move into them.
    for (int pos = FirstCandidate(stream, limit, earliest, c.pos); pos >= 0;
         pos = FirstCandidate(stream, limit, earliest, pos + 1)) {
      const JobId id = stream.ids[pos];
      if (id >= hole.before) return;
      // (A waiting job in the stream has a reservation: its planned time and start are finite
      // there, the start its reservation's.)
      if (checked_seq_[id] >= hole.seq) continue;  // it saw this hole already
      c.next = id;
      c.pos = pos + 1;
      cursors.push(c);
      return;
    }
  };
  // The cursors of hole h: every class that could use room at some level on its node.
  auto open = [&](size_t h) {
    const Hole& hole = holes_[h];
    const int p = scratch_->partition_of(hole.node);
    const Partition& part = partitions[p];
    for (int s = 0; s < static_cast<int>(streams_.size()); ++s) {
      const Stream& stream = streams_[s];
      if (!((stream.type_mask >> part.gpu_type) & 1)) continue;
      const int g = part.gpus_per_node;
      int levels[2] = {stream.gpus <= g ? stream.gpus : g, stream.gpus > g ? stream.gpus % g : 0};
      for (int level : levels) {
        if (level <= 0) continue;
        const auto first = std::upper_bound(stream.ids.begin(), stream.ids.end(), hole.after);
        advance(Cursor{kNoJob, h, level, s, static_cast<int>(first - stream.ids.begin())});
      }
    }
  };
  // A job reserved on the hole's node itself may also use its own slot there (the gap around the
  // hole measured with its reservation in place is shorter than what it has without it): it can
  // move earlier on that node only if the node has room for it just before its start, which the
  // search above does not see. Checked one by one: a node holds few reservations.
  std::vector<JobId> own;
  auto open_own = [&](size_t h) {
    const Hole& hole = holes_[h];
    if (!(hole.end > now)) return;
    own.clear();
    for (const auto& [start, id] : node_jobs_[hole.node]) {
      if (!(start > now) || id <= hole.after || id >= hole.before ||
          checked_seq_[id] >= hole.seq) {
        continue;
      }
      const Slot& slot = reserved_.At(context, id);
      if (!(hole.start < slot.end)) continue;
      const int g = scratch_->cluster().node(hole.node).gpu_count;
      const int level = slot.gpus <= g ? slot.gpus : (slot.gpus % g > 0 ? slot.gpus % g : g);
      if (profiles_[hole.node].ValueAt(std::nextafter(start, -kInfinity)) < level) continue;
      own.push_back(id);
    }
    for (JobId id : own) cursors.push(Cursor{id, SIZE_MAX, 0, -1, 0});
  };
  const size_t before = holes_.size();
  for (size_t h = 0; h < before; ++h) {
    open(h);
    open_own(h);
  }
  for (JobId id : always_check_) cursors.push(Cursor{id, SIZE_MAX, 0, -1, 0});
  always_check_.clear();
  bool moved = false;
  JobId last = kNoJob;
  while (!cursors.empty()) {
    const Cursor c = cursors.top();
    cursors.pop();
    const JobId id = c.next;
    if (c.hole != SIZE_MAX) advance(c);
    if (id == last) continue;
    last = id;
    const Slot* reserved = reserved_.Find(context, id);
    if (reserved == nullptr) continue;
    Slot old = *reserved;
    Unreserve(context, id);
    // Only to an earlier start; else it keeps its slot (and its nodes).
    if (PlaceOnNodes(context, id, now, old.start)) {
      moved = true;
      const size_t first = holes_.size();
      RecordHoles(old, old.start, old.end, id);
      for (size_t h = first; h < holes_.size(); ++h) {
        open(h);
        open_own(h);
      }
    } else {
      Reserve(context, id, std::move(old));
    }
  }
  // The holes its moves left stay for the jobs before them, at the next compression.
  holes_.erase(holes_.begin(), holes_.begin() + static_cast<std::ptrdiff_t>(before));
  for (Hole& hole : holes_) {
    hole.before = hole.after;
    hole.after = kNoJob;
  }
  freed_since_compression_ = moved;
}

// ---- both ----

bool Conservative::RunningPastEstimate(const SchedulingContext& context, double now) {
  if (!ends_stale_) return !running_ends_.empty() && running_ends_.top().first <= now;
  ends_stale_ = false;
  while (!running_ends_.empty()) {
    const auto [end, id] = running_ends_.top();
    const Slot* running = running_.Find(context, id);
    if (running != nullptr && running->end == end) return end <= now;
    running_ends_.pop();  // that job ended (or runs again, with an entry of its own)
  }
  return false;
}

void Conservative::OnCompletion(SchedulingContext& context, JobId id) {
  now_ = context.now();
  const Slot* running = running_.Find(context, id);
  if (running == nullptr) return;
  const Slot& slot = *running;
  if (context.now() < slot.end) {
    Apply(slot, context.now(), +1);
    RecordHoles(slot, context.now(), slot.end);
    freed_since_compression_ = true;
  }
  if (by_nodes_) {
    MirrorAdd(slot, +1);  // its entry in running_ends_ goes when it reaches the top
    ends_stale_ = true;
  }
  // A timestamp with completions: compress if anything was freed that the profile had counted
  // (with bf_interval, when the interval allows: Schedule).
  if (bf_interval_ > 0) {
    completions_pending_ = true;
  } else {
    compress_ = freed_since_compression_;
  }
  running_.Erase(context, id);
}

void Conservative::StartDue(SchedulingContext& context) {
  const double now = context.now();
  std::unordered_map<JobId, uint64_t> failed;  // GPU types whose placement failed this pass
  while (!by_start_.empty() && by_start_.begin()->first <= now) {
    const JobId id = by_start_.begin()->second;
    Slot slot = reserved_.At(context, id);
    // Per node the running job holds what its reservation held, on the same nodes; the two
    // cancel where they cover the same interval (below), so the profiles are left alone until
    // that is known.
    Unreserve(context, id, /*give_back=*/!by_nodes_);
    Allocation allocation;
    bool placed = false;
    if (by_nodes_) {
      // On its reserved nodes, the lowest-index free GPUs (what first-fit and best-fit take
      // within a node). They are free unless a job ran past its plan or GPUs failed.
      // Under host limits their CPUs and memory too.
      // Under a spread rule, none of them in a domain its group holds now (docs/spreading.md).
      const Resources& live = context.resources();
      const SpreadRule& spread = live.spread_rule(context.active(id).request.constraint);
      placed = true;
      for (size_t i = 0; i < slot.units.size() && placed; ++i) {
        const int node = slot.units[i].first;
        placed = live.free_gpus(node) >= slot.units[i].second &&
                 (slot.charges.empty() || live.HostFits(node, slot.charges[i])) &&
                 live.SpreadAllowsNode(spread, node);
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
      if (by_nodes_) Apply(slot, slot.start, +1);
      // Counting: the GPUs are free in number but fragmented across nodes; re-placed from the
      // type's next breakpoint. Per node: re-placed from now, or from the next breakpoint if
      // that already failed in this pass.
      const uint64_t before = failed[id];
      failed[id] |= by_nodes_ ? 1 : uint64_t{1} << slot.type;
      RecordHoles(slot, slot.start, slot.end);
      Place(
          context, id, failed[id],
          by_nodes_ && before != 0 ? NextBreakpointOnNodes(context.active(id).request, now) : now);
      freed_since_compression_ = true;  // its old slot is free for others
      continue;
    }
    context.Start(id, std::move(allocation));
    const double planned_end = slot.end;
    // (A job planned to run 0 seconds holds its GPUs for an instant, as its reservation did.)
    const double end = std::max(rule_.EstimatedEnd(context, id), PlanEnd(now, 0));
    // Per node the reservation's interval is given back and the run's taken, on the same nodes:
    // nothing changes when the two are the same (the usual start, at the reserved time and to
    // the planned end).
    const bool same_interval = by_nodes_ && slot.start == now && end == planned_end;
    if (by_nodes_ && !same_interval) Apply(slot, slot.start, +1);
    slot.start = now;
    slot.end = end;
    // Without a requested wall time the estimate is the true end, which on a faster GPU (runtime
    // model `hardware`) is before the planned one: the capacity freed is used at the next
    // completion's compression.
    if (slot.end < PlanEnd(now, rule_.Planned(context.job(id)))) freed_since_compression_ = true;
    if (!same_interval) Apply(slot, now, -1);
    if (slot.end < planned_end) RecordHoles(slot, slot.end, planned_end);
    if (by_nodes_) {
      MirrorAdd(slot, -1);
      running_ends_.emplace(slot.end, id);
    }
    const Slot& kept = running_.Insert(context, id) = slot;
    // Longer than planned (a slower GPU): the reservations on its nodes that counted on the
    // planned end move.
    if (by_nodes_ && slot.end > planned_end) {
      for (const auto& unit : kept.units) Bump(context, unit.first);
    }
  }
}

void Conservative::Schedule(SchedulingContext& context) {
  if (profiles_.empty()) Init(context);
  const double now = context.now();
  if (by_nodes_) {
    // Queries start at now wherever the first key is, so the past is dropped only now and then
    // (it only costs memory): a node's, when it changes at least kTrimPasses passes after its
    // last trim (AddToNode). Walking every node now and then would cost O(nodes) per pass on a
    // large cluster.
    ++passes_;
    now_ = now;
    // Under host limits the CPU, memory and type profiles are trimmed every kTrimPasses passes.
    if (passes_ % kTrimPasses == 0) {
      for (auto* profiles : {&cpu_profiles_, &memory_profiles_, &type_profiles_}) {
        for (Profile& profile : *profiles) profile.Trim(now);
      }
    }
    SyncFailedGpus(context);
  } else {
    for (int type : context.cluster().gpu_types()) profiles_[type].Trim(now);
  }
  if (completions_pending_) {
    // bf_interval: completions compress at once if the last compression is at least
    // bf_interval seconds old, else at the pass a timer asks for when it is.
    if (now >= last_compression_ + bf_interval_) {
      compress_ = freed_since_compression_;
      last_compression_ = now;
      completions_pending_ = false;
    } else if (compression_timer_ <= now) {
      compression_timer_ = last_compression_ + bf_interval_;
      context.SetTimer(compression_timer_, kNoJob, kCompressionTimer);
    }
  }
  if (compress_ && !gaps_.empty()) {
    CompressByHoles(context);
    compress_ = false;
  } else if (compress_) {
    // Submission order; each job is re-placed around everything else, later jobs included, and
    // can only move earlier (its old slot is still free to it).
    bool moved = false;
    for (JobId id = context.QueueFront(); id != kNoJob; id = context.QueueNext(id)) {
      const Slot* reserved = reserved_.Find(context, id);
      if (reserved == nullptr) continue;  // arrived at this timestamp: placed below
      Slot old = *reserved;
      Unreserve(context, id);
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
      const Slot* placed = reserved_.Find(context, id);
      moved =
          moved || placed == nullptr || placed->start != old.start || placed->units != old.units;
    }
    compress_ = false;
    // A job that moved left its old slot free: jobs before it in the order may use it at the
    // next compression.
    freed_since_compression_ = moved;
  }
  // The jobs retried for a slot, then the arrivals. With bf_max_job_test the arrivals join the
  // backlog instead, and jobs are admitted from it in submission order while fewer than
  // bf_max_job_test hold a reservation, and again after the due ones started, so a job admitted
  // with a slot now starts in this pass. Without it the backlog stays empty: one round.
  std::vector<JobId> waiting;
  waiting.swap(unplaced_);
  if (bf_max_job_test_ == 0) {
    waiting.insert(waiting.end(), arrivals_.begin(), arrivals_.end());
  } else {
    for (JobId id : arrivals_) {
      backlog_.push(id);
      context.SetWaitReason(id, WaitReason::kPolicyHold);
    }
  }
  arrivals_.clear();
  const size_t cap = bf_max_job_test_ == 0 ? std::numeric_limits<size_t>::max()
                                           : static_cast<size_t>(bf_max_job_test_);
  while (true) {
    while (!backlog_.empty() && Admitted() + waiting.size() < cap) {
      waiting.push_back(backlog_.top());
      backlog_.pop();
    }
    for (JobId id : waiting) Place(context, id, 0, now);
    waiting.clear();
    StartDue(context);
    if (backlog_.empty() || Admitted() >= cap) break;
  }
}

}  // namespace
}  // namespace clustersim

CLUSTERSIM_REGISTER_POLICY(conservative, "conservative",
                           "conservative backfilling: every waiting job holds a reservation; "
                           "later jobs fill gaps without delaying any of them",
                           clustersim::Conservative::kHelp, [](const clustersim::Params& params) {
                             const double interval = params.Double("bf_interval", 0);
                             if (!(interval >= 0) || !std::isfinite(interval)) {
                               throw clustersim::InputError(
                                   "parameter bf_interval=" + params.String("bf_interval", "") +
                                   ": expected a number of seconds >= 0");
                             }
                             return std::make_unique<clustersim::Conservative>(
                                 clustersim::WalltimeRule::FromParams(params), interval,
                                 params.Cap("bf_max_job_test", "jobs"));
                           });
