// The policy interface (docs/engine.md). A policy orders and selects; it never mutates the
// cluster. Once per pass (after every event due at the current time has been applied) the engine
// calls Schedule with a SchedulingContext: read-only views of the cluster, the free GPUs, the
// queue and the running jobs, plus the decision verbs Start / Preempt / Resize / SetTimer. The
// engine validates each decision as it is made and applies it at once (so the next query in the
// same pass sees it); an invalid decision is a bug in the policy and stops the run naming it.
#ifndef CLUSTERSIM_SIM_ENGINE_POLICY_H_
#define CLUSTERSIM_SIM_ENGINE_POLICY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/alloc/constraints.h"
#include "sim/engine/job.h"
#include "sim/engine/placement.h"
#include "sim/engine/wait_reasons.h"

namespace clustersim {

class ModelRuntime;  // sim/engine/model_runtime.h
class SiteRules;     // sim/engine/site_rules.h

enum class JobState : uint8_t {
  kPending,  // not yet submitted (simulated time < submit time)
  kQueued,   // submitted, waiting (possibly after a preemption)
  kRunning,
  kCompleted,
  kTimeout,     // killed at its requested wall time
  kOomFailed,   // ran out of GPU memory at every batch it was retried with
  kRejected,    // can never be placed on this cluster; never queued
  kUnfinished,  // still queued or running when the run stopped
};
const char* JobStateName(JobState state);
// A job that ran and ended: completed, timed out or failed out of memory (its JCT is defined).
inline bool Ended(JobState state) {
  return state == JobState::kCompleted || state == JobState::kTimeout ||
         state == JobState::kOomFailed;
}

// What the engine keeps of every job for the whole run: its state and what it has used so far
// (the jobs table's figures). Owned by the engine. 72 bytes, no padding: the per-job
// state of a run besides its Job (ten million jobs hold 720 MB of it). What only a queued or
// running job needs (its placement request, GPUs, progress, queue links) is its ActiveRun, kept
// from its arrival to its end; what preemption, failures and borrowing cost a job, which most
// jobs never have, is kept apart (JobCosts).
struct JobRun {
  double first_start = -1;  // seconds; -1 = never started
  double end_time = -1;
  double run_seconds = 0;  // total time spent running
  double gpu_seconds = 0;  // sum over running intervals of GPUs x time
  double energy_joules = 0;
  // Time spent in the waiting queue: before the first start and after every preemption, failure
  // or out-of-memory requeue (a resize is not a wait). For a job that ended, jct = queued_seconds
  // + run_seconds; a job still queued when the run stops counts until then.
  double queued_seconds = 0;
  int preemptions = 0;
  int max_gpus = 0;  // largest allocation held
  int max_nodes = 0;
  int32_t active = -1;    // the engine's slot of its ActiveRun; -1 = not arrived, or ended
  int16_t gpu_type = -1;  // GPU type of its current or last allocation; -1 = never ran
  JobState state = JobState::kPending;
  bool borrowing = false;  // marked borrowing now (SetBorrowing; only while running)
  // Bumped whenever the job stops running (an end, preemption, failure or rate change): a finish
  // event of another version is stale. Here rather than in ActiveRun so that the engine's check
  // of each finish event reads one cold line, not two.
  uint32_t version = 0;
};

// What the engine knows about a job from its arrival to its end (queued or running, also
// between a preemption and the next start): SchedulingContext::active. Fields ordered by size.
struct ActiveRun {
  double last_start = -1;    // start of the current or last running interval
  double work_left = 0;      // remaining work, in seconds at rate 1
  double rate = 0;           // progress per second while running
  double overhead_left = 0;  // checkpoint save + restore still to pay before progress resumes
  double queued_since = 0;   // when it last entered the queue (meaningful while queued)
  PlacementRequest request;
  Allocation allocation;  // current GPUs while running; empty while queued
  JobId queue_prev = kNoJob;
  JobId queue_next = kNoJob;
  int running_slot = -1;  // index in the running list
};

// What preemptions, failures, checkpoints and borrowing cost a job: accumulators that stay zero
// for most jobs of most runs, so the engine keeps them only for the jobs that have some
// (Engine::costs) instead of in every JobRun. All zero for the others.
struct JobCosts {
  double overhead_seconds = 0;    // total time spent on preemption and restart overhead
  double checkpoint_seconds = 0;  // total time spent saving periodic checkpoints
  double lost_gpu_seconds = 0;    // GPU-seconds whose work failures destroyed
  // GPUs x preemption cost (save + restore seconds) charged at each preemption: the GPU time the
  // job spends re-paying it when it resumes (docs/engine.md#preemption-cost).
  double preemption_gpu_seconds = 0;
  // GPU-seconds run while the policy marked the job as borrowing (SetBorrowing; quotas).
  double borrowed_gpu_seconds = 0;
  double borrowing_since = 0;  // when the current borrowing interval began
  // GPUs x preemption cost charged at each migration (SchedulingContext::Migrate): the part of
  // preemption_gpu_seconds the defragmenter caused (docs/defragmentation.md#cost).
  double migration_gpu_seconds = 0;
  int restarts = 0;            // restarts after failures of its GPUs
  int migrations = 0;          // times the defragmenter moved it
};

static_assert(sizeof(void*) != 8 || sizeof(JobRun) <= 72, "JobRun grew: check its layout (above)");

// What a model-aware run (sim/engine/model_runtime.h) adds per job; kept apart from JobRun so that
// runs without models do not carry it. All zero outside model-aware runs.
struct ModelRun {
  int batch = 0;               // per-GPU batch it runs (or will next run) with
  int oom_failures = 0;        // starts that ran out of GPU memory
  double memory_per_gpu = 0;   // bytes per GPU at its last start (M(B), or the share held)
  double oom_gpu_seconds = 0;  // GPU-seconds held by starts that ran out of memory
  double oom_delay = 0;        // seconds from its first start to its last (OOM retries)
};

class SchedulingContext {
 public:
  virtual ~SchedulingContext() = default;

  virtual double now() const = 0;
  virtual const Cluster& cluster() const = 0;
  virtual const Resources& resources() const = 0;  // the live free state
  virtual const Placement& placement() const = 0;
  virtual const Job& job(JobId id) const = 0;
  // What the engine keeps of any job for the whole run (its state, times and use so far).
  virtual const JobRun& run(JobId id) const = 0;
  // A queued or running job's request, allocation and progress. REQUIRES: the job has arrived
  // and not ended (run(id).active >= 0: queued, running, or unfinished when the run stopped);
  // asking for another job stops the run as a policy bug.
  virtual const ActiveRun& active(JobId id) const = 0;
  // The job's deadline as an absolute time (Trace::DeadlineOf), +infinity if it has none.
  virtual double deadline(JobId id) const = 0;
  // The job's locality and node limits (sim/engine/placement_constraints.h; empty if none). The
  // run's placement honours them; a policy building allocations itself must too.
  virtual const NodeLimits& node_limits(JobId id) const = 0;
  // The job's model-aware state (all zero outside model-aware runs).
  virtual const ModelRun& model_run(JobId id) const = 0;

  // The waiting queue in (submit time, input order): QueueFront, then QueueNext until kNoJob.
  virtual JobId QueueFront() const = 0;
  virtual JobId QueueNext(JobId id) const = 0;
  virtual int QueueLength() const = 0;
  // Running jobs, in no particular but deterministic order.
  virtual const std::vector<JobId>& running() const = 0;
  // GPUs out of service (failed, not yet repaired), ascending; they are neither free nor held by
  // a job. `failed_gpus_version` changes whenever the list does, so a policy keeping its own
  // copy of the cluster state can tell when to update it.
  virtual const std::vector<int>& failed_gpus() const = 0;
  virtual uint64_t failed_gpus_version() const = 0;
  // The model-aware view (memory, batch limits, rate factors), or nullptr when the run has no
  // model information.
  virtual const ModelRuntime* models() const = 0;
  // Bytes of GPU `gpu`'s memory held by running jobs (a job without a model holds its GPUs'
  // whole memory, or its share of it).
  virtual double gpu_memory_used(int gpu) const = 0;
  // Seconds a preempted or resized job spends saving and restoring before it progresses again:
  // the run's constant, and for one job (from its model state and the storage bandwidth in
  // model-aware runs with --storage-gbps, else the constant).
  virtual double preemption_cost() const = 0;
  virtual double preemption_cost(JobId id) const = 0;
  // The job's rate (work-seconds per second) on catalog GPU type `type`, on the allocation the
  // run's placement gives it on the empty cluster restricted to that type, under the run's
  // runtime model (and, in model-aware runs, its current batch); 0 if it may not use the type or
  // fits nowhere on it. For heterogeneity-aware policies (gavel, least-loaded). Cached per
  // (model, request shape, batch, type).
  virtual double TypeRate(JobId id, int type) const = 0;

  // Decisions. REQUIRES (CHECKed, naming the policy): Start — the job is queued and `allocation`
  // is free, of one allowed type and of the requested size (an elastic policy: 1..requested);
  // a share (Allocation::milli) must be free on each GPU; an elastic policy's start must fit in
  // memory (beside the GPU's other jobs), while any other policy's start that does not fit runs
  // out of memory after the start-up time (sim/engine/model_runtime.h); Preempt — running; Resize —
  // running and `allocation` free apart from the job's own GPUs. A resize costs the preemption
  // cost (checkpoint on the old GPUs, restore on the new).
  virtual void Start(JobId id, Allocation allocation) = 0;
  virtual void Preempt(JobId id) = 0;
  virtual void Resize(JobId id, Allocation allocation) = 0;
  // Moves the running job to `allocation`, as many whole GPUs elsewhere (a migration by the
  // defragmenter, docs/defragmentation.md): costs as a resize (checkpoint on the old GPUs,
  // restore on the new, the job's preemption cost paid on the new GPUs) and counts in
  // JobCosts::migrations. REQUIRES (CHECKed): running on whole GPUs (no share, no MIG instance,
  // not whole nodes), `allocation` free and of the same number of GPUs.
  virtual void Migrate(JobId id, Allocation allocation) = 0;
  // Calls Policy::OnTimer(id, tag) at `time` (>= now), before the pass at that time.
  virtual void SetTimer(double time, JobId id, int tag) = 0;
  // Marks a running job as running on borrowed capacity (a virtual cluster beyond its quota) or
  // not, from now on; the engine integrates its GPUs x time while marked
  // (JobCosts::borrowed_gpu_seconds). A job stops being marked when it stops running.
  // REQUIRES (CHECKed): running.
  virtual void SetBorrowing(JobId id, bool borrowing) = 0;
  // Ends the queued job `id` as rejected with `reason` (jobs.reason): admission control, for a
  // policy that takes only jobs it can serve (a deadline it cannot meet). The job leaves the
  // queue for good; the policy hears no OnCompletion for it. REQUIRES (CHECKed): queued, a
  // non-empty reason.
  virtual void Decline(JobId id, std::string reason) = 0;
  // Records that the queued job `id` was promised a start by `start_seconds` (>= now): a
  // reservation. The engine keeps the first promise of each job (the `jobs` column
  // `reserved_start`, as Slurm's `squeue --start` shows) and ignores later ones; see
  // Policy::KeepsPromises for what --check verifies. REQUIRES (CHECKed): queued, start >= now.
  virtual void Promise(JobId id, double start_seconds) = 0;

  // Wait reasons (docs/metrics.md#wait-reasons, sim/engine/wait_reasons.h). After every pass each
  // queued job waits for a reason: its own, stated here, or else its wait group's
  // (Policy::WaitGroup; every group starts as queue_head). The engine states the first queued
  // job's reason itself (ClassifyNoFit on the free GPUs) while the policy states none for it.
  // SetWaitReason: the queued job's own reason from now on, until the policy states another,
  // clears it, or the job leaves the queue. REQUIRES (CHECKed): queued.
  virtual void SetWaitReason(JobId id, WaitReason reason) = 0;
  // The queued job takes its group's reason again (a no-op if it has none of its own).
  virtual void ClearWaitReason(JobId id) = 0;
  // From now on, the queued jobs of wait group `group` (>= 0) without a reason of their own
  // wait for `reason`.
  virtual void SetGroupWaitReason(int group, WaitReason reason) = 0;
  // Why the job does not fit on `free` (by default the live free state) under the run's
  // placement, or nullopt if it fits (ClassifyNoFit: capacity, fragmentation by dimension, nodes
  // down). The GPUs out of service are failed_gpus().
  std::optional<WaitReason> NoFitReason(JobId id, const Resources& free) const {
    return ClassifyNoFit(cluster(), placement(), free, active(id).request, failed_gpus());
  }
  std::optional<WaitReason> NoFitReason(JobId id) const { return NoFitReason(id, resources()); }
  // False if the cluster's site model holds the queued job back now (a user's or group's limit,
  // its partition's run window or drain point, a downtime; sim/engine/site_rules.h): the policy
  // must then not start it, as Slurm leaves such a job pending whatever its priority. Always
  // true without site limits.
  virtual bool MayStart(JobId /*id*/) const { return true; }
  // The cluster's site model as resolved for the run (each job's partition, the limits), or
  // nullptr when the cluster spec has none.
  virtual const SiteRules* site() const { return nullptr; }

  // Returns true and fills `out` if the job fits now under the run's placement strategy.
  virtual bool TryPlace(JobId id, Allocation* out) const {
    out->node = -1;
    return placement().Find(resources(), active(id).request, out);
  }
};

class Policy {
 public:
  virtual ~Policy() = default;
  // Called once per pass, after the pass's events were applied.
  virtual void Schedule(SchedulingContext& context) = 0;
  // Optional hooks, called while events are applied (before the pass).
  virtual void OnArrival(SchedulingContext& /*context*/, JobId /*id*/) {}
  virtual void OnCompletion(SchedulingContext& /*context*/, JobId /*id*/) {}
  virtual void OnTimer(SchedulingContext& /*context*/, JobId /*id*/, int /*tag*/) {}
  // The job's wait group (SchedulingContext::SetGroupWaitReason, >= 0): a queued job without a
  // reason of its own waits for its group's. Asked whenever the job enters the queue, before
  // OnArrival or OnRequeue; must give the same group every time for one job. Default: 0, one
  // group for every job.
  virtual int WaitGroup(SchedulingContext& /*context*/, JobId /*id*/) { return 0; }
  // A running job lost its GPUs to a failure and is queued again (in submission order), its
  // work back at its last checkpoint. Policies that keep their own queue or running set must
  // take it back there; the default does nothing (the engine's queue already holds it).
  virtual void OnRequeue(SchedulingContext& /*context*/, JobId /*id*/) {}
  // The job's requested wall time in seconds (< 0: none). The engine kills a job whose running
  // time reaches it. Default: the trace's walltime; backfilling policies may estimate it
  // (exact duration, or duration x factor). Must not change while the job runs.
  virtual double RequestedWalltime(const Job& job) const { return job.walltime; }
  // True if the policy chooses GPU counts (up to the request) and per-GPU batches itself
  // (Allocation::batch), as `cosched` does; the engine then rates each start by
  // ModelRuntime::RateFactor, and a job without model information on n of its R requested GPUs
  // progresses at n / R of its rate (linear data-parallel scaling; docs/engine.md#elastic-starts).
  // A non-elastic policy runs every job at its user's batch.
  virtual bool Elastic() const { return false; }
  // True if the policy copes with GPU shares (Allocation::milli): a placement that shares GPUs
  // then places fractional trace requests on shares. Policies that plan on their own copy of the
  // free state (backfilling horizons, LAS and SRTF rooms) say false, and their fractional jobs
  // hold whole GPUs.
  virtual bool SupportsShares() const { return false; }
  // True if the policy starts MIG jobs (docs/mig.md) on the instances the engine's MIG placement
  // finds. Policies that plan on their own copy of whole GPUs (conservative's profiles, LAS and
  // SRTF rooms, least-loaded, weighted) say false: their MIG jobs are rejected with the reason.
  virtual bool PlacesMig() const { return true; }
  // True if the job must hold whole nodes (an exclusive QoS; docs/engine.md#whole-nodes): its
  // request is placed by PlaceWholeNodes and it holds every GPU of those nodes, working on the
  // first `gpus` of them. Asked once per job before the run.
  virtual bool WholeNodes(const Job& /*job*/) const { return false; }
  // True if the policy starts no job later than its first promise (SchedulingContext::Promise)
  // as long as every job runs at most its plan: its requested wall time, or its trace duration
  // when it has none (a policy may plan with more, as the backfilling policies' modelled user
  // estimates, which are never below the duration: then the check is only stricter). With --check the engine verifies it for every start while that holds (no
  // job has run past its plan, no failures, no out-of-memory restart): a later start stops the
  // run naming the policy. False (the default): promises are estimates (fair-share's order may
  // change before the start).
  virtual bool KeepsPromises() const { return false; }
  // True if the policy asks SchedulingContext::MayStart before every start, so that a site
  // model's limits, run windows, drains and downtime (docs/cluster.md#site-model) hold under it.
  // A run whose site has such rules refuses a policy that does not.
  virtual bool HonoursSiteRules() const { return false; }
  // True if the policy's next start is always the first queued job that MayStart (the engine's
  // queue order) as soon as it fits, and it keeps no copy of the free state between passes: the
  // defragmenter (--defrag, docs/defragmentation.md) may then move running jobs to make room for
  // that job and ask the policy again. A run with --defrag refuses a policy that says false.
  virtual bool ServesQueueHead() const { return false; }
  // Called once before the run with its trace and model table (nullptr outside model-aware
  // runs): a warning naming the fix when the policy's rule has nothing to act on in this run
  // (fair-share between users on a trace naming at most one user orders like fcfs), else "".
  virtual std::string IdleWarning(const Trace& /*trace*/, const ModelRuntime* /*models*/) const {
    return "";
  }
  // Called once before the run with the cluster and the run's placement: a warning naming the
  // fix when a setting of the policy has nothing to act on there (weighted's energy weight on a
  // cluster of one GPU type), else "".
  virtual std::string PlacementWarning(const Cluster& /*cluster*/,
                                       const Placement& /*placement*/) const {
    return "";
  }
  // Called once before the trace is read: what makes the policy's settings impossible on
  // `cluster` (a quota of more GPUs than the cluster has), naming the setting and by how much,
  // else "". The run is then refused (InputError) before any work starts.
  virtual std::string ClusterProblem(const Cluster& /*cluster*/) const { return ""; }
  // True if the policy orders jobs by their priority class (Job::priority), so a log's queues or
  // classes mean something to it; false (the default): every class is served in one order.
  virtual bool OrdersByPriority() const { return false; }
  // Called once by the engine before the run (from its constructor) with the run's trace and
  // seed (EngineOptions::seed): for what the policy draws or derives from the whole trace before
  // the first arrival, e.g. the backfilling policies' modelled user estimates
  // (policies/backfill.h). Draws must come from generators seeded by `seed`.
  virtual void BeforeRun(const Trace& /*trace*/, uint64_t /*seed*/) {}
  // After BeforeRun: what the policy plans run times with, in words, for the run's printout and
  // runs.planning_estimates ("" when it does not plan ahead).
  virtual std::string PlanningEstimates() const { return ""; }
};

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_ENGINE_POLICY_H_
