// cosched: joint batch-size co-scheduling (docs/policies.md#cosched, docs/models.md), the
// design's main proposal. Greedily in priority order, every queued job gets the (GPU type, GPU
// count, per-GPU batch) with the highest predicted rate that fits now — a count from its request
// down to a floor, the goodput-maximizing batch that fits in memory (so no job runs out of
// memory), small jobs sharing a GPU when it is the only way they start — and every `interval`
// seconds jobs running on less than they asked for are grown onto GPUs no queued job can use,
// when the predicted saving beats the reallocation cost.
//
// Parameters (defaults; the trade-off of each is at `Options` below):
//   min_fraction (0.5): a job may start on as few as ceil(min_fraction x requested) GPUs (never
//     below the model's minimum TP x PP); 1 = whole requests only.
//   share (true): two 1-GPU jobs whose memory at their batch is at most half a GPU each may
//     share one GPU at 500 milli each, when the pair fits in its memory.
//   age_weight (300): seconds per requested GPU added to a job's submit time for ordering
//     (small jobs first, with aging); 0 = submission order.
//   starvation_seconds (14400): a job waiting longer goes first and holds the GPU types it may
//     use: nothing else starts or grows on them until it starts.
//   interval (600): seconds between re-optimizations (growth of running jobs).
//   realloc_margin (2): a job is grown only when the predicted saving of its remaining time
//     exceeds realloc_margin x its preemption cost (a resize pays checkpoint + restore).
//
// The rule, exactly:
// - Order. Jobs waiting longer than starvation_seconds (since submission) come first, in
//   submission order; then every other queued job by (Job::priority descending, submit time +
//   age_weight x requested GPUs ascending, submission order). The key is static (every waiting
//   job ages at the same rate), so a job is passed only by jobs submitted at most
//   (its GPUs - theirs) x age_weight seconds after it, and never once it starves.
// - Choice for a job with model information (ModelRuntime) and request R. For every allowed GPU
//   type t present in the cluster and not held, with floor f_t = max(min_gpus(t),
//   ceil(min_fraction x R)) <= R: the largest count n in [f_t, R] the run's placement finds room
//   for now (PlacementRequest of n GPUs of type t only); its batch b = BestBatch(t, n) (<=
//   MaxBatch: fits by construction); its predicted rate speedup_t(family) x RateFactor(t, n, b),
//   speedup from the hardware catalog (the runtime model's rate is not visible to a policy). The
//   highest rate wins (ties: more GPUs, then the type listed first), so the full request on the
//   fastest type that fits now is preferred and a job starts on fewer GPUs only when that is
//   better than anything else available now.
// - Sharing (share=true). A shareable job is a modelled job requesting 1 GPU whose M(b) on 1 GPU
//   of type t is at most CapacityBytes(t) / 2. (a) When no whole GPU of any of its usable types is
//   free, it joins a GPU already half shared (free_milli >= 500) of a usable type whose jobs'
//   memory plus its own fits (gpu_memory_used + M(b) <= CapacityBytes) and whose node has the
//   free CPUs and host memory for its share's charge (docs/resources.md). (b) When it is about to
//   take the only free whole GPU of its usable types, it takes half of it instead if a partner —
//   a later queued shareable job (within kPartnerLookahead) that could use no other whole GPU,
//   with M_j + M_k <= CapacityBytes(t) and the host charges of both shares fitting the node's
//   free CPUs and host memory together — takes the other half in the same pass. So a job shares
//   only when otherwise some job would wait; never when a whole GPU is free for it.
// - Holding. A starving job that does not start holds its allowed GPU types for the rest of the
//   pass: later jobs neither start nor grow on them (so the GPUs released by finishing jobs
//   accumulate for it).
// - Growth. After the queue was served — so only GPUs no queued job could use are left — each
//   running job holding fewer whole GPUs than it asked for (in the order above; not on a held
//   type) that started or was resized at least `interval` seconds ago is resized to the largest
//   count n' in (n, R] of its type the placement finds on the free GPUs plus its own, when its
//   remaining work w satisfies w / rate - w / rate' > realloc_margin x preemption_cost(job), with
//   rate' = rate x RateFactor(n', BestBatch(n')) / RateFactor(n, b) (same type: the runtime
//   model's part of the rate is taken as unchanged). This re-optimization runs at most once per
//   `interval`, at a pass with free GPUs; when such a pass comes too early (for the last
//   re-optimization or for the jobs' last allocation change) a timer (SetTimer) brings a pass
//   at the time it may run. So a job is resized at most once per interval, only grows (never
//   back and forth), and no timer is pending while nothing could grow. Jobs on a share are not
//   resized (the engine does not move shares).
// - Without model information (models() == nullptr, a job naming no known model, or one without
//   a user batch, for which RateFactor is 1 everywhere) a job runs its whole request at its own
//   batch under the run's placement (Allocation::batch 0); no OOM is possible for it. With
//   models() == nullptr the policy is thus a greedy first-fit with backfill over whole requests
//   in the order above, with the starvation hold; no growth, no sharing.
// - A CPU-only job (no GPUs; docs/resources.md#cpu-only-jobs) starts in its turn wherever the
//   run's placement finds its CPUs and memory; one that starves holds no GPU type (it waits for
//   CPUs, which the hold would not free).
// - Under sustained overload (every queued job waiting longer than starvation_seconds) the hold
//   makes the order strict: the oldest job that does not fit blocks its types, as in fcfs, and
//   the gains left are the elastic starts and the batch choice. starvation_seconds=inf removes it.
//
// Cost. Per job on arrival: O(T x log B_max) (T = GPU types in the cluster; BestBatch on 1 GPU
// for shareable jobs) and O(T log Q) to enter the per-type demand indexes (the smallest floor
// and the smallest shareable memory among the Q queued jobs). Per pass: the starving prefix of
// the queue until the holds cover every type (O(starts + T) under overload), then a walk of the
// ordered queue that stops as soon as the demand indexes say no queued job can start (O(T) per
// check). A visited job costs O(T) when its floor exceeds the free GPUs or reaches the smallest
// count that already failed on a type in this pass (placements are monotone in the count), else
// O(T) placement queries (O(log N) each for the index-based strategies) and O(T) rate
// evaluations (BestBatch: O(log B_max) goodput estimates); failed queries per type and pass are
// at most the largest request. So a pass is O(W x T + starts x T x (log N + log B_max)), W the
// queued jobs walked (up to the last one that starts), plus the sharing lookahead
// (kPartnerLookahead) for 1-GPU jobs. A re-optimization adds one copy of the free state (O(N))
// and O(U x R) placement queries for U under-allocated jobs. Measured: the 82,247-job Philly
// trace (--assign-models, default cluster) runs in about 1.5 s.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "policies/registry.h"
#include "policies/wait_statements.h"
#include "sim/engine/model_runtime.h"
#include "sim/engine/resources.h"
#include "sim/util/error.h"

namespace clustersim {
namespace {

// Tunable defaults, each with its trade-off.
struct Options {
  // Lower: jobs start sooner on fewer GPUs (and wait to be grown); higher: fewer slow starts.
  double min_fraction = 0.5;
  // Sharing raises throughput per GPU (co-location speed 0.7 each by default, 1.4 together) at
  // the cost of each job's speed; it is used only when a job would otherwise wait.
  bool share = true;
  // Seconds per requested GPU: larger favours small jobs more (better mean JCT, more waiting for
  // big jobs, bounded by the starvation hold).
  double age_weight_seconds = 300;
  // Four hours: shorter holds GPUs idle more often; longer lets big jobs wait longer.
  double starvation_seconds = 4 * 3600;
  // Shorter reacts faster to free GPUs; longer makes fewer resize decisions.
  double interval_seconds = 600;
  // Above 1: a resize must pay for itself with room to spare (the saving is a prediction).
  double realloc_margin = 2;
};

// Later queued jobs looked at for a sharing partner (sharing rule (b)).
constexpr int kPartnerLookahead = 32;
constexpr int kShareMilli = 500;
constexpr int kReoptimizeTag = 1;

struct OrderKey {
  int neg_priority = 0;
  double virtual_submit = 0;
  JobId id = kNoJob;
  auto operator<=>(const OrderKey&) const = default;
};

// A candidate start.
struct Choice {
  int type_slot = -1;  // index in Cosched::types_
  int batch = 0;
  double rate = 0;
  Allocation allocation;
};

class Cosched final : public Policy {
 public:
  explicit Cosched(Options options) : options_(options) {}

  bool Elastic() const override { return true; }
  bool OrdersByPriority() const override { return true; }
  bool SupportsShares() const override { return true; }

  std::string IdleWarning(const Trace& trace, const ModelRuntime* models) const override {
    if (models != nullptr && models->modelled_jobs() > 0) return "";
    const bool named = std::any_of(trace.jobs.begin(), trace.jobs.end(),
                                   [](const Job& job) { return !job.model.empty(); });
    std::string text =
        "cosched: no job has model information, so no batch or GPU count is chosen and the "
        "policy is a greedy first-fit with backfill over whole requests; ";
    if (models == nullptr && named) {
      text += "add --model-aware (the trace names models)";
    } else {
      text += "add --assign-models to give every job a model and batch by its size";
    }
    return text;
  }

  void OnArrival(SchedulingContext& context, JobId id) override {
    Prepare(context, id);
    Enqueue(id, context);
  }

  void OnCompletion(SchedulingContext& /*context*/, JobId id) override { under_.erase(key_[id]); }

  // A failure sent it back to the queue: wait again, in the same order as before.
  void OnRequeue(SchedulingContext& context, JobId id) override {
    under_.erase(key_[id]);
    Enqueue(id, context);
  }

  // The re-optimization timer only makes the engine run a pass; Schedule decides what to do.
  void OnTimer(SchedulingContext& /*context*/, JobId /*id*/, int /*tag*/) override {}

  void Schedule(SchedulingContext& context) override {
    CHECK(static_cast<int>(queued_.size()) == context.QueueLength(),
          "cosched: a job entered the queue other than by arriving or by a failure");
    if (types_.empty()) InitTypes(context);
    ++pass_;
    cpu_only_tried_ = 0;
    held_mask_ = 0;
    std::fill(min_failed_.begin(), min_failed_.end(), std::numeric_limits<int>::max());
    half_free_valid_ = false;
    shared_room_ = -1;
    started_.clear();

    if (!queued_.empty()) ServeQueue(context);
    for (JobId id : started_) Dequeue(id, context);
    waits_.EndPass(context);

    Reoptimize(context);
  }

 private:
  // Per job, computed on arrival.
  struct JobInfo {
    bool modelled = false;  // has model information and a usable type
    int request = 0;        // GPUs requested (Job::gpus)
    uint64_t allowed = 0;   // catalog type mask of the request
  };

  void InitTypes(const SchedulingContext& context) {
    types_ = context.cluster().gpu_types();
    min_failed_.assign(types_.size(), std::numeric_limits<int>::max());
    floors_.assign(types_.size(), {});
    share_demand_.assign(types_.size(), {});
    half_free_room_.assign(types_.size(), -1.0);
  }

  int Slot(int catalog_type) const {
    for (size_t p = 0; p < types_.size(); ++p) {
      if (types_[p] == catalog_type) return static_cast<int>(p);
    }
    return -1;
  }

  size_t Cell(JobId id, int p) const { return static_cast<size_t>(id) * types_.size() + p; }
  int Floor(JobId id, int p) const { return floor_[Cell(id, p)]; }
  double Speed(JobId id, int p) const { return speed_[Cell(id, p)]; }

  void Prepare(const SchedulingContext& context, JobId id) {
    if (types_.empty()) InitTypes(context);
    const size_t slots = types_.size();
    if (static_cast<size_t>(id) >= info_.size()) {
      const size_t size = std::max<size_t>(static_cast<size_t>(id) + 1, 2 * info_.size());
      info_.resize(size);
      key_.resize(size);
      last_resize_.resize(size, -std::numeric_limits<double>::infinity());
      tried_.resize(size, 0);
      floor_.resize(size * slots, 0);
      speed_.resize(size * slots, 0.0);
      share_bytes_.resize(size * slots, -1.0);
      share_batch_.resize(size * slots, 0);
    }
    const Job& job = context.job(id);
    JobInfo& info = info_[id];
    info.request = job.gpus;
    info.allowed = context.active(id).request.type_mask;
    key_[id] = OrderKey{-job.priority,
                        job.submit_time + options_.age_weight_seconds * std::max(job.gpus, 1), id};
    const ModelRuntime* models = context.models();
    info.modelled = false;
    // Without a user batch RateFactor is 1 for every configuration (nothing to compare a count
    // or batch against), so such a job is treated as having no model information.
    if (models == nullptr || models->model(id) == nullptr || models->user_batch(id) < 1 ||
        job.gpus < 1) {
      return;
    }
    if (context.active(id).request.milli > 0) return;  // a fractional trace request: kept as is
    // A MIG instance runs its trace time on the instance it names
    // (docs/mig.md#what-an-instance-counts-as): no count or batch to choose, and it may start on a
    // GPU that is not wholly free.
    if (IsMigRequest(context.active(id).request)) return;
    const std::string& family = models->model(id)->family;
    const int by_fraction =
        static_cast<int>(std::ceil(options_.min_fraction * static_cast<double>(job.gpus) - 1e-9));
    for (size_t p = 0; p < slots; ++p) {
      const int t = types_[p];
      const size_t at = static_cast<size_t>(id) * slots + p;
      floor_[at] = 0;
      if (!((info.allowed >> t) & 1)) continue;
      const int min_gpus = models->min_gpus(id, t);
      if (min_gpus < 1 || min_gpus > job.gpus) continue;
      // Counts are whole replicas (multiples of TP x PP): GPUs beyond one would sit idle.
      const int replicas = (std::max(by_fraction, min_gpus) + min_gpus - 1) / min_gpus;
      floor_[at] = std::min(replicas * min_gpus, job.gpus / min_gpus * min_gpus);
      speed_[at] = context.cluster().catalog().gpu(t).SpeedupFor(family);
      info.modelled = true;
      // Shareable on this type: 1 GPU, M(b) at its best 1-GPU batch at most half the capacity.
      if (options_.share && job.gpus == 1 && floor_[at] == 1) {
        const int batch = models->BestBatch(id, t, 1);
        const double bytes = batch >= 1 ? models->MemoryBytes(id, t, batch) : -1;
        if (batch >= 1 && bytes <= models->CapacityBytes(t) / 2) {
          share_bytes_[at] = bytes;
          share_batch_[at] = batch;
        }
      }
    }
  }

  bool IsHeld(int p) const { return (held_mask_ >> types_[p]) & 1; }

  // Demand indexes: per type slot, the floors of the queued jobs that may use it and the shared
  // memory of the queued shareable jobs, so a pass can tell in O(T) that no queued job can start.
  void Enqueue(JobId id, const SchedulingContext& context) {
    queued_.insert(key_[id]);
    cpu_only_queued_ += IsCpuOnly(context.active(id).request);
    if (context.active(id).request.milli > 0) fractional_.insert(context.active(id).request.milli);
    for (size_t p = 0; p < types_.size(); ++p) {
      const int floor = DemandFloor(id, static_cast<int>(p));
      if (floor > 0) floors_[p].insert(floor);
      const double bytes = share_bytes_[Cell(id, static_cast<int>(p))];
      if (bytes >= 0) share_demand_[p].insert(bytes);
    }
  }
  void Dequeue(JobId id, const SchedulingContext& context) {
    queued_.erase(key_[id]);
    cpu_only_queued_ -= IsCpuOnly(context.active(id).request);
    if (context.active(id).request.milli > 0) {
      fractional_.erase(fractional_.find(context.active(id).request.milli));
    }
    for (size_t p = 0; p < types_.size(); ++p) {
      const int floor = DemandFloor(id, static_cast<int>(p));
      if (floor > 0) floors_[p].erase(floors_[p].find(floor));
      const double bytes = share_bytes_[Cell(id, static_cast<int>(p))];
      if (bytes >= 0) share_demand_[p].erase(share_demand_[p].find(bytes));
    }
  }
  // Fewest whole GPUs of slot p the job can start on; 0 if it cannot use the type.
  int DemandFloor(JobId id, int p) const {
    const JobInfo& info = info_[id];
    if (info.modelled) return Floor(id, p);
    if (info.request <= 0) return 0;  // a CPU-only job (the only kind of 0 GPUs queued)
    return (info.allowed >> types_[p]) & 1 ? std::max(1, info.request) : 0;
  }

  // True if some queued job may still start: a type with at least the smallest floor free (and
  // no smaller count failed there in this pass), or a half-shared GPU with room for the smallest
  // shareable job. Jobs already tried in this pass still count, so this is an upper bound.
  bool AnyRoom(const SchedulingContext& context) {
    // A queued CPU-only job not yet tried in this pass may find CPUs (checked by trying it).
    if (cpu_only_queued_ > cpu_only_tried_) return true;
    // A MIG instance may fit on a GPU that is not wholly free: only trying it tells.
    if (context.resources().any_mig()) return true;
    // A queued fractional trace request may fit on a partly shared GPU (of any type: cheap and
    // rare enough not to index by type).
    if (!fractional_.empty()) {
      if (shared_room_ < 0) {  // the largest free share on a partly shared GPU, once per change
        shared_room_ = 0;
        const IndexSet& shared = context.resources().shared_gpus();
        for (int g = shared.FindFirst(); g >= 0; g = shared.FindFrom(g + 1)) {
          shared_room_ = std::max(shared_room_, context.resources().free_milli(g));
        }
      }
      if (shared_room_ >= *fractional_.begin()) return true;
    }
    for (size_t p = 0; p < types_.size(); ++p) {
      if (IsHeld(static_cast<int>(p)) || floors_[p].empty()) continue;
      const int smallest = *floors_[p].begin();
      if (min_failed_[p] > smallest && context.resources().free_of_type(types_[p]) >= smallest) {
        return true;
      }
    }
    if (!options_.share || context.models() == nullptr) return false;
    HalfFree(context);
    for (size_t p = 0; p < types_.size(); ++p) {
      if (!IsHeld(static_cast<int>(p)) && !share_demand_[p].empty() &&
          half_free_room_[p] >= *share_demand_[p].begin()) {
        return true;
      }
    }
    return false;
  }

  void ServeQueue(SchedulingContext& context) {
    // Starving jobs: a prefix of the engine's queue (submission order). The walk ends once the
    // holds cover every type (nothing else can start), so under overload it costs O(starts).
    const double starve_before = context.now() - options_.starvation_seconds;
    uint64_t present = 0;
    for (int t : types_) present |= uint64_t{1} << t;
    JobId id = context.QueueFront();
    while (id != kNoJob && context.job(id).submit_time < starve_before &&
           (held_mask_ & present) != present) {
      const JobId next = context.QueueNext(id);
      if (tried_[id] != pass_) {
        tried_[id] = pass_;
        const bool cpu_only = IsCpuOnly(context.active(id).request);
        cpu_only_tried_ += cpu_only;
        if (!TryStart(context, id)) {
          // It fits nowhere now (or only on types an earlier starving job holds).
          waits_.StateNoFit(context, id, WaitReason::kPolicyHold);
          // A CPU-only job waits for CPUs, not GPUs: it holds no GPU type.
          if (!cpu_only) held_mask_ |= info_[id].allowed;
        }
      }
      // A sharing partner started with it has left the queue: walk again from the front
      // (rare; jobs already tried are skipped).
      id = next == kNoJob || context.run(next).state == JobState::kQueued ? next
                                                                          : context.QueueFront();
    }
    // The jobs the walk does not reach wait for room, or for the types starving jobs hold.
    context.SetGroupWaitReason(0, held_mask_ != 0 ? WaitReason::kPolicyHold : WaitReason::kCapacity);
    for (auto it = queued_.begin(); it != queued_.end(); ++it) {
      const JobId id = it->id;
      if (tried_[id] == pass_ || context.run(id).state != JobState::kQueued) continue;
      if (!AnyRoom(context)) break;
      tried_[id] = pass_;
      cpu_only_tried_ += IsCpuOnly(context.active(id).request);
      // Not started although it fits: the GPUs it fits on are held for a starving job.
      if (!TryStart(context, id, &it)) waits_.StateNoFit(context, id, WaitReason::kPolicyHold);
    }
  }

  // Returns whether the job started (possibly together with a sharing partner).
  // `position`: the job's place in queued_ when the caller walks it (nullptr: look it up).
  bool TryStart(SchedulingContext& context, JobId id,
                const std::set<OrderKey>::const_iterator* position = nullptr) {
    const JobInfo& info = info_[id];
    if (!info.modelled) return TryStartWhole(context, id);
    Choice best;
    if (!BestChoice(context, id, &best)) {
      return info.request == 1 && options_.share && TryJoinShare(context, id);
    }
    const int t = types_[best.type_slot];
    if (info.request == 1 && options_.share && UsableFreeWhole(context, id) == 1) {
      const JobId partner = FindPartner(context, id, best, position);
      if (partner != kNoJob) {
        const int gpu = best.allocation.gpus.front();
        Begin(context, id, Allocation{.gpus = {gpu}, .gpu_type = t, .milli = kShareMilli, .batch = best.batch});
        Begin(context, partner,
              Allocation{.gpus = {gpu}, .gpu_type = t, .milli = kShareMilli,
                         .batch = share_batch_[Cell(partner, best.type_slot)]});
        return true;
      }
    }
    best.allocation.batch = best.batch;
    Begin(context, id, std::move(best.allocation));
    return true;
  }

  // Sets allocation->batch to the user's batch, or the largest below it, that fits beside the
  // memory already on the allocation's (shared) GPUs; false if not even one sample does.
  static bool FitShare(const SchedulingContext& context, JobId id, Allocation* allocation) {
    const ModelRuntime& models = *context.models();
    const int t = allocation->gpu_type;
    if (models.min_gpus(id, t) != 1) return false;
    double used = 0;
    for (int g : allocation->gpus) used = std::max(used, context.gpu_memory_used(g));
    const double fixed = models.MemoryBytes(id, t, 0);
    const double per_sample = models.MemoryBytes(id, t, 1) - fixed;
    const double room = models.CapacityBytes(t) - used - fixed;
    if (room < per_sample) return false;
    int batch = static_cast<int>(
        std::min<double>(context.model_run(id).batch, std::floor(room / per_sample)));
    while (batch > 1 && models.MemoryBytes(id, t, batch) + used > models.CapacityBytes(t)) {
      --batch;  // rounding at the boundary
    }
    if (models.MemoryBytes(id, t, batch) + used > models.CapacityBytes(t)) return false;
    allocation->batch = batch;
    return true;
  }

  // True if `request` failing on the live state means every request of at least its GPUs fails
  // on that type (min_failed_): a plain request of whole GPUs, whose fit is monotone in the
  // count. Not one with placement constraints or a rule of its own (HasGroupRule: whole nodes, a
  // tensor-parallel group, a MIG instance; it may fail where a plain one of more GPUs fits), nor
  // any under host limits, where the CPUs and memory a request is charged do not grow with its
  // GPUs alone.
  static bool BoundsLarger(const SchedulingContext& context, const PlacementRequest& request) {
    return request.constraint == 0 && !HasGroupRule(request) && !context.resources().host_limited();
  }

  // A job without model information: its whole request at its own batch, on any allowed type
  // that is not held.
  bool TryStartWhole(SchedulingContext& context, JobId id) {
    const JobInfo& info = info_[id];
    PlacementRequest request = context.active(id).request;
    request.gpus = info.request;
    request.type_mask &= ~held_mask_;
    // Whole GPUs are counted per type (placements are monotone in the count); a CPU-only job
    // counts none, and a MIG instance may fit on a GPU that is not wholly free.
    const bool counted = request.milli == 0 && request.gpus > 0 && !IsMigRequest(request);
    if (counted) {
      bool possible = false;
      for (size_t p = 0; p < types_.size(); ++p) {
        if (request.AllowsType(types_[p]) && info.request < min_failed_[p] &&
            info.request <= context.resources().free_of_type(types_[p])) {
          possible = true;
        }
      }
      if (!possible) return false;
    }
    Allocation allocation;
    if (!context.placement().Find(context.resources(), request, &allocation)) {
      // A job with placement constraints (and the others BoundsLarger names) may fail where
      // others fit: its failure bounds nothing.
      if (counted && BoundsLarger(context, request)) {
        for (size_t p = 0; p < types_.size(); ++p) {
          if (request.AllowsType(types_[p])) {
            min_failed_[p] = std::min(min_failed_[p], info.request);
          }
        }
      }
      return false;
    }
    allocation.batch = 0;
    const ModelRuntime* models = context.models();
    if (allocation.milli > 0 && models != nullptr && models->model(id) != nullptr &&
        context.model_run(id).batch >= 1) {
      // A fractional trace request with a model, on a share next to other jobs: the batch must
      // fit in what they leave (no OOM by construction): the user's batch, or the largest below
      // it that fits. If nothing fits there, the share is taken on a whole free GPU instead;
      // failing that the job waits.
      if (!FitShare(context, id, &allocation)) {
        PlacementRequest whole = request;
        whole.milli = 0;
        whole.gpus = 1;
        for (int t : types_) {
          if (models->min_gpus(id, t) != 1) whole.type_mask &= ~(uint64_t{1} << t);
        }
        Allocation fresh;
        if (!context.placement().Find(context.resources(), whole, &fresh)) return false;
        fresh.milli = request.milli;
        if (!FitShare(context, id, &fresh)) return false;
        allocation = std::move(fresh);
      }
    }
    Begin(context, id, std::move(allocation));
    return true;
  }

  // The highest-rate (type, count, batch) that fits now on whole GPUs; false if none.
  bool BestChoice(const SchedulingContext& context, JobId id, Choice* best) {
    const ModelRuntime& models = *context.models();
    const Job& job = context.job(id);
    const int request = info_[id].request;
    Allocation allocation;
    for (size_t p = 0; p < types_.size(); ++p) {
      const int slot = static_cast<int>(p);
      const int floor = Floor(id, slot);
      if (floor == 0 || IsHeld(slot)) continue;
      const int t = types_[p];
      const int high = std::min({request, context.resources().free_of_type(t), min_failed_[p] - 1});
      const int step = models.min_gpus(id, t);  // whole replicas of TP x PP GPUs
      int n = high - high % step;
      for (; n >= floor; n -= step) {
        PlacementRequest want;
        want.gpus = n;
        want.type_mask = uint64_t{1} << t;
        want.job = &job;
        want.job_id = id;
        want.host = context.active(id).request.host;  // CPUs and memory (docs/resources.md)
        want.constraint = context.active(id).request.constraint;  // locality, node limit
        if (context.placement().Find(context.resources(), want, &allocation)) break;
        if (BoundsLarger(context, want)) min_failed_[p] = std::min(min_failed_[p], n);
      }
      if (n < floor) continue;
      const int batch = models.BestBatch(id, t, n);
      if (batch < 1) continue;
      const double rate = Speed(id, slot) * models.RateFactor(id, t, n, batch);
      const int best_gpus = static_cast<int>(best->allocation.gpus.size());
      if (best->type_slot < 0 || rate > best->rate || (rate == best->rate && n > best_gpus)) {
        best->type_slot = slot;
        best->batch = batch;
        best->rate = rate;
        best->allocation = std::move(allocation);
        allocation = Allocation();
      }
    }
    return best->type_slot >= 0;
  }

  // Free whole GPUs of the job's usable (allowed, present, not held, enough for 1 GPU) types.
  int UsableFreeWhole(const SchedulingContext& context, JobId id) const {
    int free = 0;
    for (size_t p = 0; p < types_.size(); ++p) {
      if (Floor(id, static_cast<int>(p)) == 1 && !IsHeld(static_cast<int>(p))) {
        free += context.resources().free_of_type(types_[p]);
      }
    }
    return free;
  }

  // M(b) on one GPU of type slot p at its best 1-GPU batch, or a negative value when the job is
  // not shareable there (more than half a GPU, or not runnable on one GPU of that type).
  double ShareBytes(JobId id, int p, int* batch) const {
    if (IsHeld(p)) return -1;
    *batch = share_batch_[Cell(id, p)];
    return share_bytes_[Cell(id, p)];
  }

  // Sharing rule (b): a later queued shareable job that could use no other whole GPU and fits
  // beside `id` on the GPU of `best`.
  JobId FindPartner(const SchedulingContext& context, JobId id, const Choice& best,
                    const std::set<OrderKey>::const_iterator* position) const {
    const int p = best.type_slot;
    const int t = types_[p];
    int batch = 0;
    const double mine = ShareBytes(id, p, &batch);
    if (mine < 0) return kNoJob;
    const double capacity = context.models()->CapacityBytes(t);
    auto it = position == nullptr ? queued_.upper_bound(key_[id]) : std::next(*position);
    for (int seen = 0; it != queued_.end() && seen < kPartnerLookahead; ++it, ++seen) {
      const JobId k = it->id;
      if (k == id || context.run(k).state != JobState::kQueued) continue;
      int k_batch = 0;
      const double theirs = ShareBytes(k, p, &k_batch);
      if (theirs < 0 || mine + theirs > capacity) continue;
      // The placement checked the node's CPUs and memory for `id` alone; the partner's share is
      // charged there too.
      if (!PairFitsHost(context, id, k, best.allocation.gpus.front())) continue;
      // Its only whole GPU would be the one `id` takes.
      if (UsableFreeWhole(context, k) != 1) continue;
      return k;
    }
    return kNoJob;
  }

  // True if the host charges of `a` and `b`, each holding a share of kShareMilli of `gpu`, fit
  // the free CPUs and host memory of its node together (docs/resources.md; always true when the
  // run does not limit host resources).
  static bool PairFitsHost(const SchedulingContext& context, JobId a, JobId b, int gpu) {
    const Resources& resources = context.resources();
    if (!resources.host_limited()) return true;
    const Cluster& cluster = context.cluster();
    const int node = cluster.NodeOfGpu(gpu);
    const HostCharge first =
        HostChargeOn(cluster.node(node), context.active(a).request.host, 1, 1, kShareMilli);
    const HostCharge second =
        HostChargeOn(cluster.node(node), context.active(b).request.host, 1, 1, kShareMilli);
    return resources.HostFits(
        node, HostCharge{first.cpu_milli + second.cpu_milli, first.memory_mib + second.memory_mib});
  }

  // Half-shared GPUs (free_milli >= 500) this pass, collected on first use, and per type slot
  // the most memory one of them has left (CapacityBytes - gpu_memory_used; -1 if none).
  const std::vector<int>& HalfFree(const SchedulingContext& context) {
    if (!half_free_valid_) {
      half_free_.clear();
      const Resources& resources = context.resources();
      const IndexSet& shared = resources.shared_gpus();
      for (int g = shared.FindFirst(); g >= 0; g = shared.FindFrom(g + 1)) {
        if (resources.free_milli(g) >= kShareMilli) half_free_.push_back(g);
      }
      ComputeHalfFreeRoom(context);
      half_free_valid_ = true;
    }
    return half_free_;
  }
  void ComputeHalfFreeRoom(const SchedulingContext& context) {
    half_free_room_.assign(types_.size(), -1.0);
    if (context.models() == nullptr) return;
    const Cluster& cluster = context.cluster();
    for (int g : half_free_) {
      const int t = cluster.node(cluster.NodeOfGpu(g)).gpu_type;
      const int p = Slot(t);
      if (p < 0) continue;
      const double room = context.models()->CapacityBytes(t) - context.gpu_memory_used(g);
      half_free_room_[p] = std::max(half_free_room_[p], room);
    }
  }

  // Sharing rule (a): join a half-shared GPU when no whole GPU of a usable type is free.
  bool TryJoinShare(SchedulingContext& context, JobId id) {
    if (UsableFreeWhole(context, id) > 0) return false;
    const std::vector<int>& candidates = HalfFree(context);
    if (candidates.empty()) return false;
    const ModelRuntime& models = *context.models();
    const Cluster& cluster = context.cluster();
    for (size_t i = 0; i < candidates.size(); ++i) {
      const int g = candidates[i];
      const int t = cluster.node(cluster.NodeOfGpu(g)).gpu_type;
      const int p = Slot(t);
      int batch = 0;
      if (p < 0 || context.resources().free_milli(g) < kShareMilli) continue;
      const double bytes = ShareBytes(id, p, &batch);
      if (bytes < 0 || context.gpu_memory_used(g) + bytes > models.CapacityBytes(t)) continue;
      const int gpu[] = {g};
      if (!context.resources().HostFitsGpus(context.active(id).request.host, gpu, kShareMilli)) {
        continue;  // its node lacks the CPUs or host memory for the share (docs/resources.md)
      }
      half_free_.erase(half_free_.begin() + static_cast<std::ptrdiff_t>(i));
      Begin(context, id, Allocation{.gpus = {g}, .gpu_type = t, .milli = kShareMilli, .batch = batch});
      ComputeHalfFreeRoom(context);
      return true;
    }
    return false;
  }

  void Begin(SchedulingContext& context, JobId id, Allocation allocation) {
    // Shares are never resized (the engine does not move a share), so only whole-GPU starts on
    // fewer GPUs than requested wait to grow.
    const bool under =
        allocation.milli == 0 && static_cast<int>(allocation.gpus.size()) < info_[id].request;
    if (allocation.milli > 0) {
      half_free_valid_ = false;  // the shared GPUs changed
      shared_room_ = -1;
    }
    context.Start(id, std::move(allocation));
    last_resize_[id] = context.now();  // a start counts as an allocation change
    started_.push_back(id);
    tried_[id] = pass_;
    if (under && info_[id].modelled) under_.insert(key_[id]);
  }

  // Remaining work (seconds at rate 1) of a running job, now.
  static double WorkLeft(const SchedulingContext& context, JobId id) {
    const ActiveRun& live = context.active(id);
    const double ran = context.now() - live.last_start;
    const double active = std::max(0.0, ran - std::min(ran, live.overhead_left));
    return std::max(0.0, live.work_left - active * live.rate);
  }

  // Growth, when it may pay: some job waits to grow and GPUs are free after the queue was served.
  // Runs Grow when the last re-optimization that looked at a job is an interval ago, else (or
  // for jobs not yet eligible) sets a timer for when it may run, so no timer is pending while
  // nothing could grow (a pending timer keeps the run going).
  void Reoptimize(SchedulingContext& context) {
    if (context.models() == nullptr || under_.empty() || context.resources().total_free() == 0) {
      return;
    }
    const double now = context.now();
    double wake = next_reoptimization_;
    if (now >= next_reoptimization_) {
      bool looked = false;
      wake = Grow(context, &looked);
      if (looked) next_reoptimization_ = now + options_.interval_seconds;
      wake = std::max(wake, next_reoptimization_);
    }
    if (std::isfinite(wake) && !(timer_at_ > now && timer_at_ <= wake)) {
      context.SetTimer(wake, kNoJob, kReoptimizeTag);
      timer_at_ = wake;
    }
  }

  // Grows the eligible under-allocated jobs (see the header comment). Sets *looked when some job
  // was eligible. Returns the earliest time a job not yet eligible (started or resized less than
  // an interval ago) on a type with free GPUs becomes eligible, or infinity.
  double Grow(SchedulingContext& context, bool* looked) {
    const ModelRuntime& models = *context.models();
    double next_eligible = std::numeric_limits<double>::infinity();
    scratch_.reset();  // copied from the live state when the first eligible job is looked at
    std::vector<JobId> done;
    for (const OrderKey& key : under_) {
      const JobId id = key.id;
      if (context.run(id).state != JobState::kRunning) {
        done.push_back(id);
        continue;
      }
      const ActiveRun& live = context.active(id);
      const int held = static_cast<int>(live.allocation.gpus.size());
      const int request = info_[id].request;
      if (held >= request) {
        done.push_back(id);
        continue;
      }
      const int t = live.allocation.gpu_type;
      const int p = Slot(t);
      if (p < 0 || IsHeld(p) || context.resources().free_of_type(t) == 0) continue;
      const double eligible = last_resize_[id] + options_.interval_seconds;
      if (context.now() < eligible) {
        next_eligible = std::min(next_eligible, eligible);
        continue;
      }
      *looked = true;
      if (!scratch_) scratch_.emplace(context.resources());
      Resources& scratch = *scratch_;
      if (scratch.free_of_type(t) == 0) continue;
      const double old_factor =
          models.RateFactor(id, t, held, std::max(context.model_run(id).batch, 1));
      if (!(old_factor > 0) || !(live.rate > 0)) continue;
      const HostDemand& host = live.request.host;
      scratch.ReleaseJob(host, live.allocation.gpus, live.allocation.milli, -1,
                         live.request.constraint);
      const int step = models.min_gpus(id, t);  // whole replicas of TP x PP GPUs
      int n = std::min(request, scratch.free_of_type(t));
      n -= n % step;
      Allocation allocation;
      for (; n > held; n -= step) {
        PlacementRequest want;
        want.gpus = n;
        want.type_mask = uint64_t{1} << t;
        want.job = &context.job(id);
        want.job_id = id;
        want.host = host;
        want.constraint = live.request.constraint;
        if (context.placement().Find(scratch, want, &allocation)) break;
      }
      bool resized = false;
      if (n > held) {
        const int batch = models.BestBatch(id, t, n);
        const double new_factor = batch >= 1 ? models.RateFactor(id, t, n, batch) : 0;
        if (new_factor > old_factor) {
          // Same type, so the runtime model's part of the rate stays (up to the placement's
          // communication cost, which this prediction leaves out).
          const double work = WorkLeft(context, id);
          const double new_rate = live.rate * new_factor / old_factor;
          const double saving = work / live.rate - work / new_rate;
          if (saving > options_.realloc_margin * context.preemption_cost(id)) {
            scratch.AllocateJob(host, allocation.gpus, allocation.milli, -1,
                                live.request.constraint);
            allocation.batch = batch;
            context.Resize(id, std::move(allocation));
            last_resize_[id] = context.now();
            if (n >= request) done.push_back(id);
            resized = true;
          }
        }
      }
      if (!resized) {
        scratch.AllocateJob(host, live.allocation.gpus, live.allocation.milli, -1,
                            live.request.constraint);
      }
    }
    for (JobId id : done) under_.erase(key_[id]);
    return next_eligible;
  }

  const Options options_;
  std::vector<int> types_;  // catalog GPU types present in the cluster ("slots")
  std::vector<JobInfo> info_;
  std::vector<OrderKey> key_;
  std::vector<int> floor_;           // job x slot: smallest count on that type, 0 = not usable
  std::vector<double> speed_;        // job x slot: the catalog's speedup for the job's model family
  std::vector<double> share_bytes_;  // job x slot: M(b) when shareable there, else -1
  std::vector<int> share_batch_;     // job x slot: its best 1-GPU batch b when shareable
  std::vector<std::multiset<int>> floors_;           // per slot: DemandFloor of queued jobs
  std::vector<std::multiset<double>> share_demand_;  // per slot: share_bytes_ of queued jobs
  std::vector<double> last_resize_;
  std::vector<uint64_t> tried_;  // pass in which the job was last considered
  std::set<OrderKey> queued_;    // waiting jobs in priority order
  std::set<OrderKey> under_;     // running modelled jobs holding less than they requested
  // Per pass.
  uint64_t pass_ = 0;
  int cpu_only_queued_ = 0;  // queued CPU-only jobs (docs/resources.md#cpu-only-jobs)
  int cpu_only_tried_ = 0;   // of them, tried in this pass
  uint64_t held_mask_ = 0;       // catalog types held for starving jobs
  WaitStatements waits_;         // wait reasons of the jobs tried (policies/wait_statements.h)
  std::vector<int> min_failed_;  // per slot: smallest count that did not fit in this pass
  std::vector<int> half_free_;
  std::vector<double> half_free_room_;  // per slot
  bool half_free_valid_ = false;
  std::multiset<int> fractional_;  // shares (milli) of the queued fractional trace requests
  int shared_room_ = -1;           // largest free_milli of a shared GPU this pass; -1 = unknown
  std::vector<JobId> started_;
  std::optional<Resources> scratch_;  // free GPUs as planned during a re-optimization
  double next_reoptimization_ = -std::numeric_limits<double>::infinity();
  double timer_at_ = -1;  // time of the latest re-optimization timer set
};

}  // namespace
}  // namespace clustersim

CLUSTERSIM_REGISTER_POLICY(
    cosched, "cosched",
    "joint batch-size co-scheduling: per job the GPU type, count (elastic), batch and GPU share "
    "of the highest predicted goodput that fits in memory; growth every interval",
    "min_fraction (0.5): smallest share of the requested GPUs a job may start on, in (0, 1]\n"
    // Continuation lines are indented to the column `clustersim list policies -v` prints at.
    "                           share (true): two small 1-GPU jobs may share a GPU (500 milli "
    "each) when one would otherwise wait\n"
    "                           age_weight (300): seconds per requested GPU added to the submit "
    "time for ordering (0: submission order)\n"
    "                           starvation_seconds (14400): a job waiting longer goes first and "
    "holds its GPU types until it starts\n"
    "                           interval (600): seconds between re-optimizations (growth)\n"
    "                           realloc_margin (2): grow only when the predicted saving exceeds "
    "this x the preemption cost",
    [](const clustersim::Params& params) {
      using clustersim::InputError;
      clustersim::Options options;
      options.min_fraction = params.Double("min_fraction", options.min_fraction);
      if (!(options.min_fraction > 0 && options.min_fraction <= 1)) {
        throw InputError("parameter min_fraction: expected a number in (0, 1]");
      }
      options.share = params.Bool("share", options.share);
      options.age_weight_seconds = params.Double("age_weight", options.age_weight_seconds);
      if (!(options.age_weight_seconds >= 0) || !std::isfinite(options.age_weight_seconds)) {
        throw InputError("parameter age_weight: expected a number of seconds >= 0");
      }
      options.starvation_seconds = params.Double("starvation_seconds", options.starvation_seconds);
      if (!(options.starvation_seconds >= 0)) {
        throw InputError(
            "parameter starvation_seconds: expected a number of seconds >= 0 "
            "(inf: never)");
      }
      options.interval_seconds = params.Double("interval", options.interval_seconds);
      if (!(options.interval_seconds > 0) || !std::isfinite(options.interval_seconds)) {
        throw InputError("parameter interval: expected a number of seconds > 0");
      }
      options.realloc_margin = params.Double("realloc_margin", options.realloc_margin);
      if (!(options.realloc_margin >= 0) || !std::isfinite(options.realloc_margin)) {
        throw InputError("parameter realloc_margin: expected a number >= 0");
      }
      return std::make_unique<clustersim::Cosched>(options);
    });
