// The discrete-event engine (docs/engine.md). It owns all simulation state: the clock, the event
// heap, the free GPUs (Resources), every job's JobRun, the waiting queue and the running list.
// Policies see it through SchedulingContext and act only through its verbs.
//
// Semantics:
// - Events are ordered by (time, kind rank, insertion sequence): at one timestamp completions
//   come first, then failures, then arrivals (in trace order), then timers. After the batch the
//   policy is asked once (a pass). Events created during a pass for the same time form a further
//   batch at that time, followed by another pass.
// - A running job's finish event carries the job's version; any rate change bumps the version,
//   so stale finish events are skipped when popped, never searched for.
// - A job that can never be placed (on the empty cluster, under the run's placement) is rejected
//   at arrival with a reason and never queued.
// - A job with a requested wall time (Policy::RequestedWalltime) is killed when its running
//   time reaches it (status timeout) unless EngineOptions::enforce_walltime is false.
// - Preemption costs EngineOptions::preemption_cost_seconds (checkpoint save + restore; 30 s by
//   default, or the model-sized checkpoint time): a preempted job, once resumed, holds its GPUs
//   that long without progress, and so does a resized or migrated job on its new GPUs. Each move
//   adds GPUs x that cost to the job's preemption GPU-seconds.
// - Failures (EngineOptions::faults, sim/engine/faults.h) are events ranked after completions: the
//   failed GPUs leave placement until repaired, jobs on them go back to the queue having lost
//   the work since their last checkpoint, and the policy hears of it through OnRequeue. With
//   failures on, the run ends when every job is done (failures alone do not keep it going).
//   A failure model (FaultOptions::failure_model, docs/reliability.md) adds failures by cause and
//   domain; an interrupted job pays its cause's detection and restart time before it computes
//   again, the detection overlapping any wait in the queue. Hot spares (the cluster spec's node
//   groups): a failed node that ran an interrupted job is replaced by a usable spare of its group,
//   which enters service, while the failed node joins the pool; spare GPUs are out of service
//   (SchedulingContext::failed_gpus) like failed ones. Per-job checkpoint plans
//   (FaultOptions::checkpoint: Young's or Daly's interval, asynchronous saves) are set at every
//   start from the job's allocation.
// - Host resources (docs/resources.md): when some job states a CPU or host-memory demand and the
//   cluster declares that dimension (RunLimitsHost), every job holds its host charge on its nodes
//   (Resources::EnableHostLimits); a job whose demand no node of an allowed type can take is
//   rejected with a reason naming the dimension, and a start that does not fit the free CPUs or
//   memory is a policy bug like one on busy GPUs.
// - The fingerprint hashes (time, kind, job index) of every event processed, in order, and of
//   every rejection (which is not counted as an event).
// - Promises (SchedulingContext::Promise): the first per job is kept. Plans hold while no job
//   has run past its plan (requested wall time, else trace duration), no failure is injected
//   and no start ran out of memory; with check_invariants, a policy that KeepsPromises() and
//   starts a job after its promise while plans hold is a policy bug.
// - Arrival-only placement (docs/engine.md#arrival-only-placement), the protocol of placement
//   papers such as FGD (Weng et al., USENIX ATC'23): with EngineOptions::skip_no_fit each arrival
//   gets a pass of its own, and a job the policy leaves queued after it is rejected with reason
//   "no fit" (nothing waits); with no_departures a started job never finishes (the run ends at
//   the last arrival, running jobs unfinished). With either, the engine records the placement
//   curve: per 1 % of the cluster's GPU capacity that has arrived, the allocation then.
#ifndef CLUSTERSIM_SIM_ENGINE_ENGINE_H_
#define CLUSTERSIM_SIM_ENGINE_ENGINE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "sim/engine/allocation_log.h"
#include "sim/engine/failure_log.h"
#include "sim/engine/faults.h"
#include "sim/engine/fleet_failures.h"
#include "sim/engine/fragmentation.h"
#include "sim/engine/metrics.h"
#include "sim/engine/node_pools.h"
#include "sim/engine/overcommit.h"
#include "sim/engine/placement.h"
#include "sim/engine/placement_constraints.h"
#include "sim/engine/policy.h"
#include "sim/engine/runtime_model.h"
#include "sim/engine/site_rules.h"
#include "sim/engine/spare_pool.h"
#include "sim/engine/spot.h"
#include "sim/engine/wait_reasons.h"
#include "sim/util/index_set.h"

namespace clustersim {

class Engine;

struct EngineProgress {
  double sim_time = 0;
  int64_t jobs_done = 0;
  int64_t jobs_total = 0;
  uint64_t events = 0;
};

// The preemption cost of a job without a model-sized checkpoint (docs/engine.md#preemption-cost):
// checkpoint save + restore, paid by every preempted job when it resumes and by every resized or
// migrated job on its new GPUs. 30 s is what the Pollux authors' simulator charges every
// re-allocation of Pollux, Optimus and Tiresias alike (petuum/adaptdl, simulator/simulator.py,
// Job.reallocate: "rescale_time = 30"). Lower favours preemptive policies; 0 makes moves free.
inline constexpr double kDefaultPreemptionCostSeconds = 30;

struct EngineOptions {
  double timeseries_interval_seconds = 300;
  // --check: verify invariants after every pass (the O(jobs) state census on every 64th pass
  // for traces of more than 100,000 jobs).
  bool check_invariants = false;
  bool enforce_walltime = true;
  // Save + restore per preemption, resize or migration (docs/engine.md#preemption-cost).
  double preemption_cost_seconds = kDefaultPreemptionCostSeconds;
  FaultOptions faults;  // failures and checkpoints; off by default
  uint64_t seed = 0;  // the run's seed, handed to Policy::BeforeRun for the policy's own draws
  // Model-aware run (memory, OOM, batch, sharing; sim/engine/model_runtime.h); nullptr = off. Must
  // outlive the engine and be built from the same trace.
  const ModelRuntime* models = nullptr;
  // The trace's request classes for the FGD metric (sim/engine/fragmentation.h), when the caller
  // has them already (run.cc builds them for the placement); nullptr = computed from the trace.
  const std::vector<TaskClass>* workload = nullptr;
  // Keep the allocation log (sim/engine/allocation_log.h): one record per running interval.
  bool record_allocations = false;
  // Integrate wait reasons (sim/engine/wait_reasons.h). Off only to measure their cost
  // (bench/end_to_end_bench.cc): the statements of the policy are then ignored and every job's
  // queued time has no reason.
  bool wait_reasons = true;
  // Locality and node limits (sim/engine/placement_constraints.h); they apply only to jobs with
  // data nodes or a node limit (JobConstraints) or when max_nodes_per_job is set.
  ConstraintOptions constraints;
  // Arrival-only placement (see the file comment): reject a job that does not start in the pass
  // of its own arrival ("no fit"); never schedule a started job's finish.
  bool skip_no_fit = false;
  bool no_departures = false;
  // --defrag (docs/defragmentation.md): the run's policy is wrapped by the defragmenter; the
  // engine only reports its migrations (summary rows migrations, migration_gpu_hours).
  bool defrag = false;
  double stop_time = std::numeric_limits<double>::infinity();  // stop the clock here
  const std::atomic<bool>* interrupt = nullptr;         // set asynchronously (Ctrl-C) to stop early
  std::function<void(const EngineProgress&)> progress;  // called every progress_every events
  uint64_t progress_every = 1 << 16;
  // Called on the engine's thread after a pass once at least observe_every events were processed
  // since the last call: it may read the engine (jobs that reached a final state, closed
  // timeseries intervals), never change it. The SQLite writer hands rows to its thread from here.
  std::function<void(const Engine&)> observe;
  uint64_t observe_every = 4096;
  // Called as a job ends (completed, killed, failed out of memory, or rejected), with its
  // ActiveRun as it was at its end, which the engine then forgets (tests and diagnostics).
  std::function<void(JobId, const ActiveRun&)> on_job_end;
  // Grows and shrinks the cluster spec's node pools (docs/autoscaling.md); nullptr = pools stay
  // at their start size (`--autoscaler none`). Must outlive the engine.
  Autoscaler* autoscaler = nullptr;
  // GPU memory over-commit F (sim/engine/overcommit.h, docs/overcommit.md): a GPU share of milli
  // reserves ceil(milli / F) thousandths. 1 = none (the default).
  double memory_overcommit = 1.0;
  // Each share's memory over its run under over-commit (docs/overcommit.md#memory-over-time).
  PeakModel peaks;
};

enum class RunStatus { kComplete, kInterrupted };

// One point of the placement curve: the state after the first arrival at which the GPU capacity
// requested by the jobs arrived so far (gpus x 1000 or gpu_milli each, rejected jobs included)
// reached `percent` % of the cluster's GPU capacity. Shares are fractions of that capacity.
struct PlacementCurvePoint {
  int percent = 0;
  double arrived_share = 0;      // requested by the arrived jobs
  double allocated_share = 0;    // held by running jobs (shares pro rata)
  double unallocated_share = 0;  // arrived_share - allocated_share
  double frag_idle_share = 0;    // FGD expected fragmentation / idle capacity (0 if none idle)
  double frag_total_share = 0;   // FGD expected fragmentation / capacity
  int64_t failed_jobs = 0;       // jobs requesting GPUs rejected so far
};

// True if the run limits host resources: some job states a CPU or host-memory demand that the
// cluster declares (a node with cpus, resp. host_memory_gib). (`run --no-host-demands` drops the
// demands from the trace.)
bool RunLimitsHost(const Trace& trace, const Cluster& cluster);

class Engine final : public SchedulingContext {
 public:
  // All references must outlive the engine. Throws InputError for a trace job naming an unknown
  // GPU type.
  Engine(const Trace& trace, const Cluster& cluster, const Placement& placement,
         const RuntimeModel& runtime, Policy& policy, std::string policy_name,
         EngineOptions options);

  // Runs to the end of the trace (or stop_time / interrupt). Jobs still queued or running at
  // the end are marked unfinished.
  void Run();

  RunStatus status() const { return status_; }
  uint64_t fingerprint() const { return fingerprint_; }
  uint64_t events_processed() const { return events_; }
  uint64_t passes() const { return passes_; }
  // Starts applied (a resize counts as a start on its new allocation).
  int64_t starts() const { return starts_; }
  // Jobs that started at least once (JobRun::first_start set).
  int64_t jobs_started() const { return jobs_started_; }
  // The allocation log; empty unless EngineOptions::record_allocations.
  const AllocationLog& allocations() const { return allocations_; }
  const std::vector<JobRun>& runs() const { return runs_; }
  // The job's placement request as the run makes it at its arrival (its GPUs as a site counts
  // them, allowed types, host demands), for any job.
  PlacementRequest RequestOf(JobId id) const;
  // The jobs that have costs (JobCosts), ascending: summing over them in this order is summing
  // over every job.
  std::vector<JobId> JobsWithCosts() const;
  // What preemptions, failures, checkpoints and borrowing cost the job (all zero if nothing).
  const JobCosts& costs(JobId id) const {
    static const JobCosts kNone;
    if (costs_.empty()) return kNone;
    const auto it = costs_.find(id);
    return it == costs_.end() ? kNone : it->second;
  }
  // The placement curve (see PlacementCurvePoint); empty unless skip_no_fit or no_departures.
  const std::vector<PlacementCurvePoint>& placement_curve() const { return curve_; }
  // Why a job was rejected or killed; empty otherwise.
  const std::string& reason(JobId id) const;
  const Metrics& metrics() const { return metrics_; }
  const Trace& trace() const { return trace_; }
  const EngineOptions& options() const { return options_; }
  bool policy_is_elastic() const { return elastic_; }
  bool policy_keeps_promises() const { return policy_.KeepsPromises(); }
  std::string policy_planning_estimates() const { return policy_.PlanningEstimates(); }
  // The start first promised to the job (SchedulingContext::Promise), or NaN if none.
  double promised_start(JobId id) const {
    return promised_start_.empty() ? std::numeric_limits<double>::quiet_NaN()
                                   : promised_start_[id];
  }
  // True while every job has run at most its plan and nothing failed (see the file comment).
  bool plans_held() const { return plans_held_; }
  bool host_limited() const { return resources_.host_limited(); }
  // The run's placement constraints, or nullptr when no job has locality or a node limit.
  const PlacementConstraints* constraints() const {
    return constrained_placement_ ? constraints_.get() : nullptr;
  }
  // The cluster's site model resolved for this run (sim/engine/site_rules.h), or nullptr when
  // the cluster spec has none.
  const SiteRules* site() const override { return site_.get(); }
  // Failure totals: failures injected, GPU-seconds and node-seconds spent down (to the end of
  // the run), GPU-seconds of work lost and spent saving checkpoints.
  int64_t failures() const { return failures_; }
  double down_gpu_seconds() const { return down_gpu_seconds_; }
  double down_node_seconds() const { return down_node_seconds_; }
  double lost_gpu_seconds() const;  // sum over the jobs with costs, in job order
  double checkpoint_gpu_seconds() const { return checkpoint_gpu_seconds_; }
  // What failures did (docs/reliability.md#metrics): failures, totals per cause, per-job costs
  // and productive seconds. Its productive_seconds() is sized (one per job) when failures or
  // checkpoints are on, empty otherwise.
  const FailureLog& failure_log() const { return failure_log_; }
  // The node pools (empty when the cluster spec has none): node states, node_events, billing.
  const NodePools& node_pools() const { return pools_; }
  // The job's effective training time ratio: productive seconds / (end, or the run's end, minus
  // first start); NaN if it never started or failures and checkpoints are off.
  double Ettr(JobId id) const;

  // SchedulingContext
  double now() const override { return now_; }
  const Cluster& cluster() const override { return cluster_; }
  const Resources& resources() const override { return resources_; }
  const Placement& placement() const override { return *active_placement_; }
  const Job& job(JobId id) const override { return trace_.jobs[id]; }
  const JobRun& run(JobId id) const override { return runs_[id]; }
  const ActiveRun& active(JobId id) const override {
    const int32_t slot = runs_[id].active;
    if (slot < 0) ActiveMissing(id);
    return ActiveSlot(slot);
  }
  double deadline(JobId id) const override { return trace_.DeadlineOf(trace_.jobs[id]); }
  const NodeLimits& node_limits(JobId id) const override {
    static const NodeLimits kNone;
    const uint16_t cls = constrained_placement_ ? constraints_->ClassOf(id) : 0;
    return cls == 0 ? kNone : constraints_->limits(cls);
  }
  const ModelRun& model_run(JobId id) const override {
    static const ModelRun kNone;
    return model_runs_.empty() ? kNone : model_runs_[id];
  }
  JobId QueueFront() const override { return queue_head_; }
  JobId QueueNext(JobId id) const override { return Live(id).queue_next; }
  int QueueLength() const override { return queue_length_; }
  const std::vector<JobId>& running() const override { return running_; }
  const std::vector<int>& failed_gpus() const override { return failed_gpus_; }
  uint64_t failed_gpus_version() const override { return failed_gpus_version_; }
  const ModelRuntime* models() const override { return options_.models; }
  double gpu_memory_used(int gpu) const override;
  double preemption_cost() const override { return options_.preemption_cost_seconds; }
  // The same for one job (model state / storage bandwidth when known).
  double preemption_cost(JobId id) const override { return PreemptionSeconds(id); }
  double TypeRate(JobId id, int type) const override;
  // As SchedulingContext::TryPlace; an `out` without storage gets a GPU list a finished job gave
  // back, so that starts do not allocate.
  bool TryPlace(JobId id, Allocation* out) const override;
  void Start(JobId id, Allocation allocation) override;
  void Preempt(JobId id) override;
  void Resize(JobId id, Allocation allocation) override;
  void Migrate(JobId id, Allocation allocation) override;
  void SetTimer(double time, JobId id, int tag) override;
  void SetBorrowing(JobId id, bool borrowing) override;
  void Promise(JobId id, double start_seconds) override;
  void SetWaitReason(JobId id, WaitReason reason) override;
  void ClearWaitReason(JobId id) override;
  void SetGroupWaitReason(int group, WaitReason reason) override;

  // Seconds per (job, reason) the jobs spent queued (sim/engine/wait_reasons.h); complete for every
  // job once Run returns.
  const WaitLedger& wait_reasons() const { return wait_; }
  void Decline(JobId id, std::string reason) override;
  bool MayStart(JobId id) const override;

 private:
  enum Rank : uint64_t { kFinishRank = 0, kFaultRank = 1, kArrivalRank = 2, kTimerRank = 3 };
  // 24 bytes: the heap is the engine's hottest structure. `key` is the rank in the top 8 bits
  // and the insertion sequence below, so (time, key) is the (time, rank, sequence) order.
  // `aux` is the job's version for a finish (top bit set for a wall-time kill), the tag for a
  // timer, and kFault* bits (plus a failure-trace row << 3) for a fault, whose `job` is the
  // node or the GPU.
  struct Event {
    double time;
    uint64_t key;
    JobId job;
    uint32_t aux;
    uint64_t rank() const { return key >> 56; }
  };
  static constexpr uint32_t kKillBit = 1u << 31;
  static constexpr uint32_t kOomBit = 1u << 30;  // a finish that is an out-of-memory failure
  static constexpr uint32_t kVersionMask = ~(kKillBit | kOomBit);
  // A failure model's event: kFaultFleet without kFaultFromTrace, the cause's index << 4; its
  // `job` is the cause (a failure) or the struck unit (a repair).
  static constexpr uint32_t kFaultRepair = 1, kFaultGpu = 2, kFaultFromTrace = 4, kFaultFleet = 8;
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      if (a.time != b.time) return a.time > b.time;
      return a.key > b.key;
    }
  };

  // Checks every job's GPU types against the cluster (an unknown type is an InputError before
  // the run starts), keeps each distinct gpu_type's mask and chooses the placement that the
  // jobs' kinds need (MIG, whole nodes, tensor-parallel groups).
  void ResolveRequests();
  // The job's ActiveRun, from its arrival to its end (JobRun::active).
  ActiveRun& Live(JobId id) { return const_cast<ActiveRun&>(active(id)); }
  const ActiveRun& Live(JobId id) const { return active(id); }
  ActiveRun& ActiveSlot(int32_t slot) const {
    return active_chunks_[slot >> kActiveChunkBits][slot & (kActiveChunk - 1)];
  }
  // Start loading the next finishing job's JobRun, resp. ActiveRun, and the GPU lists of the
  // batch's finishing jobs (see engine.cc).
  void PrefetchRun() const;
  void PrefetchActive() const;
  void PrefetchGpus(const std::vector<Event>& batch) const;
  // The ActiveRun of a finish event's job, or nullptr (another event, or a job without one).
  const ActiveRun* FinishingActive(const Event& e) const {
    if (e.rank() != kFinishRank || e.job < 0) return nullptr;
    const int32_t slot = runs_[e.job].active;
    return slot < 0 ? nullptr : &ActiveSlot(slot);
  }
  // Gives the arriving job an ActiveRun (a fresh one, in a slot an ended job left or a new one).
  ActiveRun& Activate(JobId id);
  // The job ended (or was rejected): its slot goes to the next arrival.
  void Deactivate(JobId id);
  [[noreturn]] void ActiveMissing(JobId id) const;
  // Why a job that fits no placement on the empty cluster is rejected.
  std::string RejectionReason(JobId id) const;
  // Why a job without GPUs cannot be held (docs/resources.md#cpu-only-jobs); "" if it can.
  std::string CpuOnlyRejection(JobId id) const;
  void Push(double time, Rank rank, JobId job, uint32_t aux);
  // Counts an event and hashes it into the fingerprint.
  void Record(double time, int kind, JobId job);
  // Hashes (time, kind, job) into the fingerprint without counting an event.
  void Hash(double time, int kind, JobId job);
  void Arrive(JobId id);
  // An arrived job that can run on the empty cluster: the site's admission (when it has one),
  // then the queue and the policy's OnArrival.
  void Enqueue(JobId id);
  // Ends a job that was never started as rejected, now, with `reason` (jobs.reason).
  void Reject(JobId id, std::string reason);
  void Finish(JobId id, bool walltime_kill);
  // Resize and Migrate once validated: stops the job's interval (`why`), charges the preemption
  // cost on the new GPUs and starts it there.
  void Move(JobId id, Allocation allocation, IntervalEnd why);
  // Bookkeeping shared by finish, preempt, resize, failure, OOM and the end of the run; `why`
  // ends the running interval (a failure loses the work since the last checkpoint).
  void StopRunning(JobId id, IntervalEnd why);
  void StartFaults();
  void Fault(const Event& e);
  // A failure model's failure or repair (docs/reliability.md).
  void FleetFault(const Event& e);
  // Interrupts the running job `id` hit by a failure of `cause` (an index of failure_log_): it
  // loses the work since its last usable checkpoint and goes back to the queue, to pay
  // `detection` (less the time it waits) and `restart` seconds plus its restore before it
  // computes again.
  void FailJob(JobId id, int cause, double detection, double restart);
  // Interrupts victims_ and, when the failure takes out GPUs [first_gpu, last_gpu), replaces each
  // failed node that ran one of them by a usable spare of its group. Returns the spares used.
  int InterruptVictims(int cause, double detection, double restart, bool takes_out,
                       int first_gpu, int last_gpu);
  // Out-of-service bookkeeping: a GPU goes down (a failure) or comes back (a repair; a pool
  // node's GPU is then held for the pool), a free GPU of a pool node is held for it, a spare
  // node enters service.
  void MarkDown(int gpu);
  void MarkRepaired(int gpu);
  void HoldForPool(int gpu);
  void ReleaseSpare(int node);
  // Hands usable spares of `group` to its failed nodes that ran a job and found none (owed_).
  void ServeOwedSpares(int group);
  // After GPUs of `node` came back: an owed node that is whole again is owed nothing more, and
  // its group's owed nodes may get a spare that became usable.
  void AfterRepair(int node);
  void AddOutOfService(int gpu);
  void RemoveOutOfService(int gpu);
  // Failures per second that hit a job on `gpus` under the run's failure rates (MTBFs and the
  // failure model; 0 with a failure trace alone).
  double JobFailureRate(const std::vector<int>& gpus) const;
  // Sets the job's checkpoint plan for its new allocation (when plans_ is on).
  void PlanJobCheckpoints(JobId id);
  // The failure log, spares and checkpoint plans a run's options and cluster ask for.
  void SetUpReliability();
  // At a start after an interruption: the detection left after the wait, the wait's GPU-seconds.
  void ResumeAfterInterruption(JobId id);
  // Books paid restart overhead to the cause of the job's last interruption.
  void ChargeRestartOverhead(JobId id, double seconds, double gpus);
  // Holds for the spare pool the free GPUs among `gpus` on pool nodes.
  void DrainIntoPool(const std::vector<int>& gpus);
  double ConstantRestoreSeconds(JobId id) const;
  // Checkpoint interval, pause and usability lag of a running job (plans_, or the run's fixed
  // interval and SaveSeconds).
  double CheckpointInterval(JobId id) const {
    return plans_.empty() ? options_.faults.checkpoint_interval_seconds
                          : plans_[id].interval_seconds;
  }
  double PauseSeconds(JobId id) const {
    return plans_.empty() ? SaveSeconds(id) : plans_[id].pause_seconds;
  }
  double LagSeconds(JobId id) const { return plans_.empty() ? 0.0 : plans_[id].lag_seconds; }
  // Save or restore seconds of the job on `gpus` from its checkpoint bytes and the cluster spec's
  // storage (docs/reliability.md#checkpoint-cost); < 0 when that does not apply.
  double StorageSeconds(JobId id, const std::vector<int>& gpus, bool write) const;
  void OomFail(JobId id);
  // Ends a job that ran out of GPU memory for the last time: oom-failed, with `reason`.
  void EndOomFailed(JobId id, std::string reason);
  // Adds (sign +1) or removes (-1) the job's memory on its GPUs.
  void PlaceMemory(JobId id, int sign);
  // Bytes per GPU the job holds on its allocation, and whether its batch runs out of memory.
  double JobMemory(JobId id, const Allocation& allocation, int batch, bool* oom) const;
  double RateOf(JobId id, const Allocation& allocation, int batch) const;
  // The GPUs of `allocation` the job works on: all of them, but for a whole-node job the first
  // request.gpus (the rest are held idle). Points at `allocation` or at `*scratch`.
  const Allocation& Working(JobId id, const Allocation& allocation, Allocation* scratch) const;
  // Ends the job's borrowing interval (if marked), adding its GPU-seconds.
  void AccrueBorrowed(JobId id);
  // Checkpoint save, restore, and preemption (save + restore) seconds of a job: from its model
  // state and the storage bandwidth when both are known (ModelRuntime::CheckpointSeconds), else
  // the run's constants.
  double SaveSeconds(JobId id) const;
  double RestoreSeconds(JobId id) const;
  double PreemptionSeconds(JobId id) const;
  // GPUs of the allocation as a busy count (a share counts its fraction).
  static double HeldGpus(const Allocation& allocation) {
    return static_cast<double>(allocation.gpus.size()) *
           (allocation.milli > 0 ? allocation.milli / 1000.0 : 1.0);
  }
  void AccrueDownTime();
  void ScheduleFinish(JobId id);
  void QueueAppend(JobId id);
  void QueueInsertSorted(JobId id);
  // After a pass: the first queued job's reason when the policy stated none (ClassifyNoFit),
  // recomputed only when that job or the free state changed.
  void DeriveHeadWaitReason();
  void QueueRemove(JobId id);
  void RunningAdd(JobId id);
  void RunningRemove(JobId id);
  void ValidateAllocation(JobId id, const Allocation& allocation, const char* verb,
                          bool own_gpus_allowed) const;
  // For a whole-node job: `allocation` is whole nodes, as few as its request needs.
  void ValidateWholeNodes(JobId id, const Allocation& allocation) const;
  void CheckInvariants() const;
  // Node pools (sim/engine/engine_pools.cc). Timers of job kPoolScanJob (a scan is due after the
  // pass) and kPoolReadyJob (aux: a requested node that is now ready).
  static constexpr JobId kPoolScanJob = -3;
  static constexpr JobId kPoolReadyJob = -4;
  // GPU memory over-commit (sim/engine/overcommit.h): timers of job kOverflowJob (aux: the GPU)
  // at the next time the shares on a GPU exceed its memory; the jobs then run out of memory.
  static constexpr JobId kOverflowJob = -9;
  void ScheduleOverflow(int gpu, bool include_now);
  void Overflow(int gpu);
  std::optional<SharedGpuMemory> shared_memory_;
  std::vector<double> next_overflow_;  // per GPU: the time of its pending overflow timer
  int oom_cause_ = -1;                 // the failure log's cause "gpu-memory"
  bool overflowing_ = false;           // while Overflow takes jobs off (no rescheduling)
  void SetUpPools();
  void StartPools();
  void PoolTimer(const Event& e);
  void ScanPools();
  // Nodes take their GPUs out of placement (allocated, out of service) or give them back.
  void HoldOutNode(int node);
  void BringInNode(int node);
  void CheckPoolInvariants() const;
  // Spot capacity (sim/engine/spot.h, engine_spot.cc). Timers of job kSpotNoticeJob (aux: node;
  // a drawn interruption, stale unless it is the node's pending one), kSpotTraceJob (aux: node;
  // from an interruptions file), kSpotGoneJob (aux: node; its notice is over) and
  // kSpotReplacedJob (aux: node; a fixed spot node's replacement is ready).
  static constexpr JobId kSpotNoticeJob = -5;
  static constexpr JobId kSpotTraceJob = -6;
  static constexpr JobId kSpotGoneJob = -7;
  static constexpr JobId kSpotReplacedJob = -8;
  void SetUpSpot();
  void StartSpot();
  void SpotTimer(const Event& e);
  void DrawSpotInterruption(int node);
  // Once every job is done, drops the spot timers at the top of the heap.
  void DropSpotTimersWhenDone();
  [[noreturn]] void PolicyBug(const std::string& what) const;

  const Trace& trace_;
  const Cluster& cluster_;
  const Placement& placement_;
  WholeNodePlacement whole_node_placement_;
  // Built when some job has locality or a node limit; wraps the placement in use before it.
  std::unique_ptr<PlacementConstraints> constraints_;
  std::unique_ptr<ConstrainedPlacement> constrained_placement_;
  // placement_, whole_node_placement_ if a job needs it, or constrained_placement_ around either.
  const Placement* active_placement_;
  const RuntimeModel& runtime_;
  Policy& policy_;
  std::string policy_name_;
  EngineOptions options_;

  Resources resources_;
  Resources empty_resources_;  // the cluster with nothing allocated, for rejection tests
  Metrics metrics_;
  std::vector<JobRun> runs_;
  // The ActiveRuns of the jobs between arrival and end, in slots that ended jobs leave to the
  // next arrivals (JobRun::active): a run holds as many as jobs were ever active at once, not one
  // per job. Chunks of kActiveChunk, so that a reference stays valid while others are added.
  static constexpr int kActiveChunkBits = 10;
  static constexpr int32_t kActiveChunk = int32_t{1} << kActiveChunkBits;
  std::vector<std::unique_ptr<ActiveRun[]>> active_chunks_;
  std::vector<int32_t> free_active_;                   // slots ended jobs left
  int32_t active_slots_ = 0;                           // slots ever handed out
  std::unordered_map<uint32_t, uint64_t> type_masks_;  // gpu_type symbol -> catalog type mask
  std::map<JobId, std::string> reasons_;  // few jobs have one: kept out of JobRun
  std::unordered_map<JobId, JobCosts> costs_;  // the jobs that have some (costs())
  std::priority_queue<Event, std::vector<Event>, Later> heap_;
  uint64_t seq_ = 0;
  size_t next_arrival_ = 0;
  double now_ = 0;
  JobId queue_head_ = kNoJob;
  JobId queue_tail_ = kNoJob;
  // The queued JobIds as an ordered set, for QueueInsertSorted; built at the first insertion
  // that the walk from the tail does not place in a few steps, kept from then on.
  IndexSet queued_ids_;
  bool queued_indexed_ = false;
  int queue_length_ = 0;
  std::vector<JobId> running_;
  std::map<RequestShape, bool> fits_empty_cache_;
  // The last answer of fits_empty_cache_ (most arrivals repeat the previous shape).
  RequestShape last_fits_key_{-1, -1, 0, 0, 0, false, 0, 0, 0};
  bool last_fits_ = false;
  // GPU lists of finished jobs, handed to TryPlace (at most kSpareGpuLists kept).
  static constexpr size_t kSpareGpuLists = 1024;
  mutable std::vector<std::vector<int>> spare_gpu_lists_;
  // TypeRate cache: (the request's shape on the type, the job's model symbol, trace share and
  // GPUs, model entry, user batch, batch) -> rate.
  mutable std::map<std::tuple<RequestShape, uint32_t, int, int, int, int, int>, double>
      type_rate_cache_;
  int64_t jobs_done_ = 0;
  // Placement curve state: GPU milli requested by arrived jobs, jobs requesting GPUs rejected.
  std::vector<PlacementCurvePoint> curve_;
  int64_t arrived_milli_ = 0;
  int64_t failed_gpu_jobs_ = 0;
  void ObserveCurve();
  double finished_gpu_seconds_ = 0;
  uint64_t fingerprint_ = 14695981039346656037ull;
  uint64_t events_ = 0;
  uint64_t passes_ = 0;
  int64_t starts_ = 0;
  int64_t jobs_started_ = 0;
  AllocationLog allocations_;
  uint64_t next_progress_ = 0;
  uint64_t next_observe_ = 0;
  RunStatus status_ = RunStatus::kComplete;

  // Faults (only when options_.faults.failures()).
  ExponentialSource fault_rng_;
  std::vector<uint8_t> gpu_down_;   // per GPU: failures covering it (node and GPU level)
  std::vector<JobId> holder_;       // per GPU: the running job holding it, or kNoJob
  std::vector<uint8_t> node_down_;  // per node: node-level failures in progress
  int down_gpus_ = 0;
  int down_nodes_ = 0;
  double down_since_ = 0;  // time of the last change of the two counts above
  int64_t failures_ = 0;
  double down_gpu_seconds_ = 0;
  double down_node_seconds_ = 0;
  double checkpoint_gpu_seconds_ = 0;
  std::vector<JobId> victims_;    // scratch: jobs on the GPUs of one failure
  // Ascending: the GPUs out of service, gpu_down_ > 0 or held for the spare pool.
  std::vector<int> failed_gpus_;
  std::optional<FleetFailures> fleet_;  // with a failure model
  SparePool spares_;                    // when some node group has spares
  // Per group: failed nodes that ran an interrupted job and found no usable spare, with the
  // failure's cause; each gets the group's next usable spare (ServeOwedSpares).
  std::vector<std::map<int, int>> owed_;
  FailureLog failure_log_;
  // failure_log_'s causes for --node-mtbf, --gpu-mtbf and a failure trace's node and GPU rows.
  int node_cause_ = -1, gpu_cause_ = -1, trace_cause_ = -1, trace_gpu_cause_ = -1;
  // Scratch: (failed node, job) for each failed node that ran an interrupted job.
  std::vector<std::pair<int, JobId>> hit_nodes_;
  // Per-job checkpoint plans and restore seconds, when some job's plan differs from the run's
  // constants (a rule other than fixed, asynchronous saves, or storage in the cluster spec).
  std::vector<CheckpointPlan> plans_;
  std::vector<double> restore_seconds_;

  // Node pools (only when the cluster spec has some).
  NodePools pools_;
  ScaleDecision scale_;
  bool scan_due_ = false;
  int pool_out_gpus_ = 0;  // GPUs of pool and spot nodes not ready (out of service)
  // By node: 1 while HoldOutNode holds it out (its GPUs and, under host limits, its CPUs and
  // memory); empty until a node is held out.
  std::vector<uint8_t> held_out_;
  SpotState spot_;         // only when some node group is spot capacity

  // Model-aware runs (only when options_.models).
  std::vector<double> gpu_memory_;    // per GPU: bytes held by running jobs
  std::vector<uint8_t> oom_pending_;  // per job: its current start runs out of memory
  // Per job, the times it ran out of memory under over-commit (empty until the first).
  std::vector<uint8_t> overflow_kills_;
  std::vector<ModelRun> model_runs_;  // per job
  bool elastic_ = false;
  uint64_t failed_gpus_version_ = 0;

  // Promises (only once a policy makes one): per job, the first promised start or NaN.
  std::vector<double> promised_start_;
  bool plans_held_ = true;

  // Wait reasons: the ledger; the job whose reason the engine derived last and the free state it
  // derived it on (state_version_ changes whenever GPUs are taken or given back).
  WaitLedger wait_;
  JobId derived_head_ = kNoJob;
  uint64_t state_version_ = 0;
  uint64_t derived_version_ = 0;
  // The site model (only when the cluster spec has one): its rules, and the time of the pass
  // the engine has asked for when a time rule changes (SiteRules::NextChange), -inf if none.
  std::unique_ptr<SiteRules> site_;
  double site_wake_ = -std::numeric_limits<double>::infinity();
  double cycle_wake_ = -std::numeric_limits<double>::infinity();  // the next scheduler cycle
  // The plan of a job for the site's rules (SiteRules::Plan with the policy's wall time).
  double SitePlan(JobId id) const;
  void ScheduleSiteWake();
  // With a scheduler cycle (SiteSpec::scheduler_cycle_seconds): true, with a pass asked for at
  // the next cycle, if now is not one and the batch just applied (`finished`: a job ended,
  // `arrived`: one was submitted) triggers none.
  bool DeferToCycle(bool finished, bool arrived);
};

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_ENGINE_ENGINE_H_
