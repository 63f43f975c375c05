#include "sim/engine/engine.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "sim/engine/mig.h"
#include "sim/engine/model_runtime.h"
#include "sim/engine/overcommit.h"
#include "sim/util/error.h"
#include "sim/util/populate.h"

namespace clustersim {
namespace {

// Sets `victims` to the running jobs holding GPUs in [first, last), ascending without repeats
// (a failure's victims, in a deterministic order for the policy's hooks): jobs on whole GPUs
// through `holder`; jobs on shares or MIG instances, which `holder` does not record (a GPU may
// have several), by a walk over the running jobs, done only when some GPU of the range is held
// by no holder although it is neither down nor a held spare.
template <typename AllocationOf>
void CollectGpuVictims(int first, int last, const std::vector<JobId>& holder,
                       const Resources& resources, const std::vector<uint8_t>& gpu_down,
                       const SparePool& spares, const std::vector<JobId>& running,
                       AllocationOf allocation_of, std::vector<JobId>* victims) {
  victims->clear();
  bool shared = false;
  for (int g = first; g < last; ++g) {
    if (holder[g] != kNoJob) {
      victims->push_back(holder[g]);
    } else if (!resources.IsGpuFree(g) && gpu_down[g] == 0 && !spares.IsHeld(g)) {
      shared = true;
    }
  }
  if (shared) {
    for (JobId id : running) {
      const Allocation& a = allocation_of(id);
      if (a.milli > 0 && std::any_of(a.gpus.begin(), a.gpus.end(),
                                     [&](int g) { return g >= first && g < last; })) {
        victims->push_back(id);
      }
    }
  }
  std::sort(victims->begin(), victims->end());
  victims->erase(std::unique(victims->begin(), victims->end()), victims->end());
}

// Event kinds as recorded in the fingerprint. A rejection is not an event of its own (it happens
// in an arrival's or a pass's processing and is not counted in events()), but it is hashed, so
// runs that reject different jobs have different fingerprints.
enum EventKind : int {
  kKindFinish = 0,
  kKindFailure = 1,
  kKindArrival = 2,
  kKindTimer = 3,
  kKindRepair = 4,
  kKindReject = 5
};

// One step of the fingerprint: FNV-1a's xor-multiply applied to a whole 64-bit word, followed
// by a xor-shift so high bits feed back into low ones.
// The job index of the engine's own timer: a pass when a site rule changes with time.
constexpr JobId kSiteWakeJob = -2;

uint64_t MixWord(uint64_t hash, uint64_t word) {
  hash = (hash ^ word) * 1099511628211ull;
  return hash ^ (hash >> 29);
}

// Metrics' HostThresholds from the jobs' requests (`request_of(id)` for each job).
template <typename RequestOf>
HostThresholds SmallestHostDemands(size_t jobs, const RequestOf& request_of) {
  HostThresholds t;
  auto take = [](int32_t stated, const PlacementRequest& r, int32_t* least, int* piece) {
    if (stated > 0) {
      *least = std::min(*least, r.milli > 0 ? stated : stated / std::max(r.gpus, 1));
    } else {
      const int p = r.milli > 0 ? r.milli : 1000;
      *piece = *piece == 0 ? p : std::min(*piece, p);
    }
  };
  for (size_t i = 0; i < jobs; ++i) {
    const PlacementRequest r = request_of(static_cast<JobId>(i));
    if (r.gpus <= 0) continue;
    take(r.host.cpu_milli, r, &t.cpu_milli, &t.unstated_cpu_piece_milli);
    take(r.host.memory_mib, r, &t.memory_mib, &t.unstated_memory_piece_milli);
  }
  return t;
}

}  // namespace

bool RunLimitsHost(const Trace& trace, const Cluster& cluster) {
  bool cpus = false;
  bool memory = false;
  for (const Node& node : cluster.nodes()) {
    cpus = cpus || NodeCpuMilli(node) > 0;
    memory = memory || NodeMemoryMib(node) > 0;
  }
  if (!cpus && !memory) return false;
  for (const Job& job : trace.jobs) {
    if ((cpus && job.cpu_milli > 0) || (memory && job.memory_mib > 0)) return true;
  }
  return false;
}

const char* JobStateName(JobState state) {
  switch (state) {
    case JobState::kPending:
      return "pending";
    case JobState::kQueued:
      return "queued";
    case JobState::kRunning:
      return "running";
    case JobState::kCompleted:
      return "completed";
    case JobState::kTimeout:
      return "timeout";
    case JobState::kOomFailed:
      return "oom-failed";
    case JobState::kRejected:
      return "rejected";
    case JobState::kUnfinished:
      return "unfinished";
  }
  return "?";
}

Engine::Engine(const Trace& trace, const Cluster& cluster, const Placement& placement,
               const RuntimeModel& runtime, Policy& policy, std::string policy_name,
               EngineOptions options)
    : trace_(trace),
      cluster_(cluster),
      placement_(placement),
      whole_node_placement_(placement),
      active_placement_(&placement),
      runtime_(runtime),
      policy_(policy),
      policy_name_(std::move(policy_name)),
      options_(std::move(options)),
      resources_(cluster),
      empty_resources_(cluster),
      metrics_(cluster, options_.timeseries_interval_seconds),
      fault_rng_(options_.faults.seed) {
  CHECK(cluster.catalog().gpus().size() <= 64, "at most 64 GPU types are supported");
  // Every job's JobRun is written now: back the array on both cores first (sim/util/populate.h).
  runs_.reserve(trace.jobs.size());
  PopulateNow(runs_.data(), trace.jobs.size() * sizeof(JobRun));
  runs_.resize(trace.jobs.size());
  elastic_ = policy_.Elastic();
  if (options_.wait_reasons) wait_.Resize(trace.jobs.size());
  if (RunLimitsHost(trace, cluster)) {
    resources_.EnableHostLimits();
    empty_resources_.EnableHostLimits();
  }
  if (placement_.CountsJobKinds()) resources_.EnableJobKinds();
  if (cluster.spec().site.present) {
    site_ = std::make_unique<SiteRules>(cluster.spec().site, cluster, trace, options_.faults.seed);
    if (site_->has_start_rules() && !policy_.HonoursSiteRules()) {
      throw InputError(cluster.spec().origin, 0, 0,
                       "policy " + policy_name_ +
                           " does not apply a site's limits, run windows, drains or downtime; "
                           "use one that does (fcfs, easy, multifactor: "
                           "docs/cluster.md#site-model)");
    }
  }
  ResolveRequests();
  if (!trace.constraints.empty() || options_.constraints.max_nodes_per_job > 0) {
    constraints_ = std::make_unique<PlacementConstraints>(trace, cluster, options_.constraints);
    if (!constraints_->empty()) {
      if (auto rules = constraints_->spread_rules()) resources_.EnableSpread(std::move(rules));
      constrained_placement_ =
          std::make_unique<ConstrainedPlacement>(*active_placement_, *constraints_);
      active_placement_ = constrained_placement_.get();
    }
  }
  metrics_.set_resources(&resources_);
  if (resources_.host_limited()) {
    metrics_.EnableHostLimits(
        SmallestHostDemands(runs_.size(), [this](JobId id) { return RequestOf(id); }));
  }
  metrics_.SetWorkload(
      options_.workload != nullptr
          ? *options_.workload
          : WorkloadClasses(trace_, kDefaultMaxTaskClasses, placement_.SharesGpus(),
                            resources_.host_limited()));
  SetUpReliability();
  if (options_.memory_overcommit > 1.0) {
    // GPU memory over-commit (docs/overcommit.md): shares may run out of memory.
    shared_memory_.emplace(cluster.total_gpus(), options_.peaks);
    next_overflow_.assign(cluster.total_gpus(), std::numeric_limits<double>::infinity());
    oom_cause_ = failure_log_.AddCause(
        {"gpu-memory", "GPU memory over-commit: co-located peaks", "gpu"});
  }
  if (cluster.has_pools()) SetUpPools();
  if (cluster.has_spot()) SetUpSpot();
  if (options_.models != nullptr) {
    metrics_.set_memory_reported(true);
    gpu_memory_.assign(cluster.total_gpus(), 0.0);
    oom_pending_.assign(trace.jobs.size(), 0);
    model_runs_.resize(trace.jobs.size());
    for (size_t i = 0; i < trace.jobs.size(); ++i) {
      model_runs_[i].batch = options_.models->user_batch(static_cast<JobId>(i));
    }
  }
  policy_.BeforeRun(trace_, options_.seed);
}

void Engine::ResolveRequests() {
  const HardwareCatalog& catalog = cluster_.catalog();
  for (const Job& job : trace_.jobs) {
    if (job.gpu_type.empty() || type_masks_.count(job.gpu_type.id()) != 0) continue;
    const std::string& types = job.gpu_type.str();
    uint64_t mask = 0;
    size_t begin = 0;
    while (begin <= types.size()) {
      size_t end = types.find('|', begin);
      if (end == std::string::npos) end = types.size();
      const std::string name = types.substr(begin, end - begin);
      auto type = catalog.Find(name);
      if (!type) {
        // Name the first line of the file with this value (jobs are sorted by submit time).
        const Job* first = &job;
        for (const Job& other : trace_.jobs) {
          if (other.gpu_type == job.gpu_type && other.line < first->line) first = &other;
        }
        throw InputError(trace_.path, static_cast<int>(first->line), first->gpu_type_column,
                         "job " + first->id + ": gpu_type: unknown GPU type \"" + name +
                             "\"; valid types: " + catalog.NameList());
      }
      mask |= cluster_.TypeAndAliases(*type);
      begin = end + 1;
    }
    type_masks_.emplace(job.gpu_type.id(), mask);
  }
  // One MIG instance (docs/mig.md), whole nodes, and tensor-parallel groups within a node
  // (docs/reliability.md#model-parallelism-in-traces; not for a GPU share) are placed by the
  // whole-node placement, whatever the run's placement.
  for (size_t i = 0; i < trace_.jobs.size(); ++i) {
    const Job& job = trace_.jobs[i];
    const PlacementRequest request = RequestOf(static_cast<JobId>(i));
    if (job.mig_profile != 0 || request.whole_nodes ||
        (request.milli == 0 && job.tensor_parallel > 1)) {
      active_placement_ = &whole_node_placement_;
      break;
    }
  }
}

PlacementRequest Engine::RequestOf(JobId id) const {
  const Job& job = trace_.jobs[id];
  PlacementRequest request;
  request.gpus = site_ ? site_->RequestGpus(id) : job.gpus;
  request.job = &job;
  request.job_id = id;
  request.host = HostDemand{job.cpu_milli, job.memory_mib};
  if (job.mig_profile != 0) {
    // One MIG instance: placed by PlaceMig (ResolveRequests).
  } else if (policy_.WholeNodes(job) && request.gpus > 0) {
    // Whole nodes are counted in GPUs: a job without GPUs holds its CPUs and memory on one
    // node, as every CPU-only job does (docs/engine.md#whole-nodes).
    request.whole_nodes = true;
  } else if (placement_.SharesGpus() && policy_.SupportsShares() && job.IsShare()) {
    request.milli = ReservedMilli(job.gpu_milli, options_.memory_overcommit);
  }
  // A site partition restricts the job to its nodes' types (Cluster::PartitionTypes).
  uint64_t partition_mask = site_ ? site_->type_mask(id) : ~uint64_t{0};
  // spot_ok = 0: never on spot nodes (docs/autoscaling.md#spot-placement).
  if (const JobConstraints* c = trace_.ConstraintsOf(job); c != nullptr && !c->spot_ok) {
    partition_mask &= ~cluster_.SpotTypes();
  }
  request.type_mask = partition_mask;
  if (!job.gpu_type.empty()) request.type_mask = type_masks_.at(job.gpu_type.id()) & partition_mask;
  if (constrained_placement_) request.constraint = constraints_->ClassOf(id);
  return request;
}

const std::string& Engine::reason(JobId id) const {
  static const std::string kNone;
  auto it = reasons_.find(id);
  return it == reasons_.end() ? kNone : it->second;
}

void Engine::Push(double time, Rank rank, JobId job, uint32_t aux) {
  CHECK(seq_ < (uint64_t{1} << 56), "event sequence overflow");
  heap_.push(Event{time, (static_cast<uint64_t>(rank) << 56) | seq_++, job, aux});
}

void Engine::Record(double time, int kind, JobId job) {
  ++events_;
  Hash(time, kind, job);
}

void Engine::Hash(double time, int kind, JobId job) {
  uint64_t time_bits;
  std::memcpy(&time_bits, &time, sizeof time_bits);
  const uint64_t event =
      (static_cast<uint64_t>(static_cast<uint32_t>(kind)) << 32) | static_cast<uint32_t>(job);
  fingerprint_ = MixWord(MixWord(fingerprint_, time_bits), event);
}

void Engine::Run() {
  // The engine's own timers are told apart by these job ids: each must be distinct (and spot's a
  // contiguous range, kSpotReplacedJob..kSpotNoticeJob).
  static_assert(kSiteWakeJob != kNoJob && kPoolScanJob < kSiteWakeJob &&
                kPoolReadyJob < kPoolScanJob &&
                kSpotNoticeJob < kPoolReadyJob &&
                kSpotReplacedJob == kSpotNoticeJob - 3 &&
                kOverflowJob < kSpotReplacedJob,
                "engine timer job ids must be distinct");
  const auto& jobs = trace_.jobs;
  const double kInf = std::numeric_limits<double>::infinity();
  std::vector<Event> batch;
  const bool faults = options_.faults.failures();
  // Arrival-only runs record the placement curve (ObserveCurve); others need none of its counts.
  const bool records_curve = options_.skip_no_fit || options_.no_departures;
  if (faults) {
    plans_held_ = false;  // failures requeue jobs: promises are estimates
    StartFaults();
  }
  if (!pools_.empty()) StartPools();
  if (spot_.on) StartSpot();
  if (options_.record_allocations) {
    // One interval per start and its GPUs: sized for one start of every job up front, so the
    // log of a large trace is not copied as it grows (restarts still grow it).
    size_t gpus = 0;
    for (const Job& job : jobs) {
      gpus += static_cast<size_t>(std::clamp(job.gpus, 0, cluster_.total_gpus()));
    }
    allocations_.intervals.reserve(jobs.size());
    allocations_.gpus.reserve(gpus);
  }
  while (true) {
    if (options_.interrupt && options_.interrupt->load(std::memory_order_relaxed)) {
      status_ = RunStatus::kInterrupted;
      break;
    }
    if (spot_.on) DropSpotTimersWhenDone();
    const double t_heap = heap_.empty() ? kInf : heap_.top().time;
    const double t_arrival = next_arrival_ < jobs.size() ? jobs[next_arrival_].submit_time : kInf;
    const double t = std::min(t_heap, t_arrival);
    if (t == kInf) break;
    // Failures and repairs go on for ever; the run is over when every job is.
    if (faults && jobs_done_ == static_cast<int64_t>(jobs.size())) break;
    if (t > options_.stop_time) {
      now_ = options_.stop_time;
      metrics_.AdvanceTo(now_);
      break;
    }
    now_ = t;
    PrefetchActive();
    metrics_.AdvanceTo(t);

    batch.clear();
    while (!heap_.empty() && heap_.top().time == t) {
      batch.push_back(heap_.top());
      heap_.pop();
    }
    PrefetchRun();
    PrefetchGpus(batch);
    size_t b = 0;
    bool batch_has_finish = false;
    bool batch_has_arrival = false;
    for (; b < batch.size() && batch[b].rank() < kArrivalRank; ++b) {
      const Event& e = batch[b];
      if (e.rank() == kFaultRank) {
        Fault(e);
        continue;
      }
      const JobRun& run = runs_[e.job];
      if (run.state != JobState::kRunning || run.version != (e.aux & kVersionMask))
        continue;  // stale
      Record(t, kKindFinish, e.job);
      batch_has_finish = true;
      if (e.aux & kOomBit) {
        OomFail(e.job);
      } else {
        Finish(e.job, (e.aux & kKillBit) != 0);
      }
    }
    while (next_arrival_ < jobs.size() && jobs[next_arrival_].submit_time == t) {
      const JobId id = static_cast<JobId>(next_arrival_++);
      Record(t, kKindArrival, id);
      batch_has_arrival = true;
      Arrive(id);
      if (options_.skip_no_fit) {
        // The arrival's own pass: the queue holds at most this job, so the policy can only start
        // it or leave it, and a job left would wait, which this protocol does not allow.
        ++passes_;
        policy_.Schedule(*this);
        if (runs_[id].state == JobState::kQueued) {
          QueueRemove(id);
          Reject(id, "no fit");
        }
      }
      if (const Job& job = jobs[id]; records_curve && job.gpus > 0) {
        arrived_milli_ += job.DemandMilli();
        if (runs_[id].state == JobState::kRejected) ++failed_gpu_jobs_;
      }
      if (options_.skip_no_fit) ObserveCurve();
    }
    for (; b < batch.size(); ++b) {
      const Event& e = batch[b];
      Record(t, kKindTimer, e.job);
      if (e.job == kSiteWakeJob) continue;  // only a pass: a site rule changed with time
      if (e.job == kOverflowJob) {
        Overflow(static_cast<int>(e.aux));
        continue;
      }
      if (e.job == kPoolScanJob || e.job == kPoolReadyJob) {
        PoolTimer(e);
        continue;
      }
      if (e.job <= kSpotNoticeJob && e.job >= kSpotReplacedJob) {
        SpotTimer(e);
        continue;
      }
      policy_.OnTimer(*this, e.job, static_cast<int>(e.aux));
    }

    if (!site_ || !DeferToCycle(batch_has_finish, batch_has_arrival)) {
      ++passes_;
      policy_.Schedule(*this);
      DeriveHeadWaitReason();
      if (site_) ScheduleSiteWake();
    }
    if (scan_due_) ScanPools();
    if (options_.no_departures && !options_.skip_no_fit) ObserveCurve();
    metrics_.ObserveQueue(resources_, queue_head_ == kNoJob ? nullptr : &Live(queue_head_).request,
                          queue_length_, static_cast<int>(running_.size()));
    if (options_.check_invariants) CheckInvariants();
    if (options_.progress && events_ >= next_progress_) {
      next_progress_ = events_ + options_.progress_every;
      options_.progress(
          EngineProgress{now_, jobs_done_, static_cast<int64_t>(jobs.size()), events_});
    }
    if (options_.observe && events_ >= next_observe_) {
      next_observe_ = events_ + options_.observe_every;
      options_.observe(*this);
    }
  }
  // Whatever is still queued or running did not finish within the run.
  for (JobId id = 0; id < static_cast<JobId>(runs_.size()); ++id) {
    JobRun& run = runs_[id];
    if (run.state == JobState::kRunning) {
      StopRunning(id, IntervalEnd::kRunEnd);
      run.state = JobState::kUnfinished;
    } else if (run.state == JobState::kQueued || run.state == JobState::kPending) {
      if (run.state == JobState::kQueued) {
        const double since = Live(id).queued_since;
        if (options_.wait_reasons) wait_.Leave(id, since, now_);
        run.queued_seconds += now_ - since;
      }
      run.state = JobState::kUnfinished;
    }
  }
  if (faults) AccrueDownTime();
  metrics_.Finish(now_);
  if (options_.check_invariants && options_.wait_reasons) {
    // Every job's wait-reason seconds add up to its queued time.
    for (JobId id = 0; id < static_cast<JobId>(runs_.size()); ++id) {
      double seconds = 0;
      for (const auto& [reason, s] : wait_.Seconds(id)) seconds += s;
      const double queued = runs_[id].queued_seconds;
      CHECK(std::abs(seconds - queued) <= 1e-9 * std::max(1.0, queued),
            "job " + trace_.jobs[id].id + ": wait-reason seconds " + std::to_string(seconds) +
                " != queued seconds " + std::to_string(queued));
    }
  }
  if (options_.check_invariants && options_.record_allocations) {
    // One interval per start; their GPU-seconds are the jobs' (and the metrics' busy integral).
    CHECK(static_cast<int64_t>(allocations_.intervals.size()) == starts_,
          "allocation log holds " + std::to_string(allocations_.intervals.size()) +
              " intervals for " + std::to_string(starts_) + " starts");
    double jobs_gpu_seconds = 0;
    for (const JobRun& run : runs_) jobs_gpu_seconds += run.gpu_seconds;
    const double logged = allocations_.GpuSeconds();
    CHECK(std::abs(logged - jobs_gpu_seconds) <= 1e-6 * std::max(1.0, jobs_gpu_seconds),
          "allocation log GPU-seconds " + std::to_string(logged) + " != jobs' " +
              std::to_string(jobs_gpu_seconds));
  }
}

// A finishing job's data went cold during its run (hours of simulated time, thousands of events
// earlier). Its loads are started ahead, in two steps: the JobRun (all the stale check reads) of
// the next event as soon as it is at the heap's top, then, a pass later, its ActiveRun (whose slot
// the JobRun holds; Finish reads it), while the metrics advance. Fetching the two events after the
// top as well was slower (bench/README.md).
void Engine::PrefetchRun() const {
  if (heap_.empty()) return;
  const Event& next = heap_.top();
  if (next.rank() == kFinishRank && next.job >= 0) __builtin_prefetch(&runs_[next.job]);
}

// The GPU list of each finishing job in the batch (a block of its own on the heap, which
// Resources::Release reads first): its ActiveRun was fetched ahead while the metrics advanced.
void Engine::PrefetchGpus(const std::vector<Event>& batch) const {
  for (const Event& e : batch) {
    if (e.rank() != kFinishRank) return;  // finishes come first in a batch
    const ActiveRun* live = FinishingActive(e);
    if (live != nullptr && !live->allocation.gpus.empty()) {
      __builtin_prefetch(live->allocation.gpus.data());
    }
  }
}

void Engine::PrefetchActive() const {
  if (heap_.empty()) return;
  const ActiveRun* active = FinishingActive(heap_.top());
  if (active == nullptr) return;
  const char* live = reinterpret_cast<const char*>(active);
  for (size_t offset = 0; offset < sizeof(ActiveRun); offset += 64) {
    __builtin_prefetch(live + offset);
  }
}

void Engine::StartFaults() {
  const FaultOptions& f = options_.faults;
  gpu_down_.assign(cluster_.total_gpus(), 0);
  holder_.assign(cluster_.total_gpus(), kNoJob);
  node_down_.assign(cluster_.node_count(), 0);
  auto mtbf = [](const std::vector<double>& by_type, int type) {
    return static_cast<size_t>(type) < by_type.size() ? by_type[type] : FaultOptions::kNever;
  };
  // Draws in node order, then GPU order: the failure times depend on the seed and the cluster
  // only, so every policy run with one seed meets the same failures.
  for (int n = 0; n < cluster_.node_count(); ++n) {
    const double mean = mtbf(f.node_mtbf_seconds, cluster_.node(n).gpu_type);
    if (mean < FaultOptions::kNever) Push(fault_rng_.Next(mean), kFaultRank, n, 0);
  }
  for (int n = 0; n < cluster_.node_count(); ++n) {
    const Node& node = cluster_.node(n);
    const double mean = mtbf(f.gpu_mtbf_seconds, node.gpu_type);
    if (!(mean < FaultOptions::kNever)) continue;
    for (int g = node.first_gpu; g < node.first_gpu + node.gpu_count; ++g) {
      Push(fault_rng_.Next(mean), kFaultRank, g, kFaultGpu);
    }
  }
  CHECK(f.trace.size() < (size_t{1} << 28), "failure trace too long");
  for (size_t i = 0; i < f.trace.size(); ++i) {
    const FailureRecord& r = f.trace[i];
    const Node& node = cluster_.node(r.node);
    const bool gpu = r.gpu >= 0;
    Push(r.time, kFaultRank, gpu ? node.first_gpu + r.gpu : r.node,
         static_cast<uint32_t>(i << 3) | kFaultFromTrace | (gpu ? kFaultGpu : 0));
  }
  if (fleet_) {
    CHECK(fleet_->cause_count() < (1 << 27), "too many failure causes");
    for (int c = 0; c < fleet_->cause_count(); ++c) {
      Push(fleet_->NextGap(c), kFaultRank, c, kFaultFleet | (static_cast<uint32_t>(c) << 4));
    }
  }
}

void Engine::ObserveCurve() {
  const int64_t capacity = int64_t{cluster_.total_gpus()} * kMilliPerGpu;
  if (capacity == 0) return;
  const int next = curve_.empty() ? 0 : curve_.back().percent + 1;
  // Percent p is reached when arrived >= p % of the capacity (integer test, no rounding).
  if (arrived_milli_ * 100 < int64_t{next} * capacity) return;
  PlacementCurvePoint point;
  point.arrived_share = static_cast<double>(arrived_milli_) / capacity;
  point.allocated_share = metrics_.busy_gpus_now() / cluster_.total_gpus();
  point.unallocated_share = point.arrived_share - point.allocated_share;
  const double fragmented = metrics_.fgd_fragmented_milli_now();
  const int64_t idle = metrics_.fgd_idle_milli_now();
  point.frag_idle_share = idle > 0 ? fragmented / static_cast<double>(idle) : 0.0;
  point.frag_total_share = fragmented / static_cast<double>(capacity);
  point.failed_jobs = failed_gpu_jobs_;
  for (int p = next; arrived_milli_ * 100 >= int64_t{p} * capacity; ++p) {
    point.percent = p;
    curve_.push_back(point);
  }
}

std::vector<JobId> Engine::JobsWithCosts() const {
  std::vector<JobId> ids;
  ids.reserve(costs_.size());
  for (const auto& entry : costs_) ids.push_back(entry.first);
  std::sort(ids.begin(), ids.end());
  return ids;
}

double Engine::lost_gpu_seconds() const {
  double total = 0;
  for (const JobId id : JobsWithCosts()) total += costs_.at(id).lost_gpu_seconds;
  return total;
}

void Engine::AccrueDownTime() {
  down_gpu_seconds_ += down_gpus_ * (now_ - down_since_);
  down_node_seconds_ += down_nodes_ * (now_ - down_since_);
  down_since_ = now_;
}

void Engine::Fault(const Event& e) {
  if ((e.aux & kFaultFleet) && !(e.aux & kFaultFromTrace)) {
    FleetFault(e);
    return;
  }
  const FaultOptions& f = options_.faults;
  const bool repair = e.aux & kFaultRepair;
  const bool gpu_level = e.aux & kFaultGpu;
  const bool from_trace = e.aux & kFaultFromTrace;
  Record(now_, repair ? kKindRepair : kKindFailure, e.job);
  ++state_version_;
  AccrueDownTime();
  const int node = gpu_level ? cluster_.NodeOfGpu(e.job) : e.job;
  const int first = gpu_level ? e.job : cluster_.node(node).first_gpu;
  const int last = gpu_level ? e.job + 1 : first + cluster_.node(node).gpu_count;  // exclusive
  if (!repair) {
    ++failures_;
    if (!gpu_level && node_down_[node]++ == 0) ++down_nodes_;
    CollectGpuVictims(
        first, last, holder_, resources_, gpu_down_, spares_, running_,
        [&](JobId id) -> const Allocation& { return Live(id).allocation; }, &victims_);
    const int cause = from_trace ? (gpu_level ? trace_gpu_cause_ : trace_cause_)
                                 : gpu_level ? gpu_cause_ : node_cause_;
    const int spares_used = InterruptVictims(cause, 0, 0, true, first, last);
    for (int g = first; g < last; ++g) MarkDown(g);
    metrics_.OnNodeChanged(node);
    const double repair_after = from_trace ? f.trace[e.aux >> 3].duration : f.mttr_seconds;
    Push(now_ + repair_after, kFaultRank, e.job, e.aux | kFaultRepair);
    FailureEvent event;
    event.time = now_;
    event.cause = cause;
    event.first_node = node;
    event.node_count = 1;
    event.first_gpu = first;
    event.gpus_out = last - first;
    event.spares_used = spares_used;
    event.repair_seconds = repair_after;
    failure_log_.Record(event, victims_);
    return;
  }
  if (!gpu_level && --node_down_[node] == 0) --down_nodes_;
  for (int g = first; g < last; ++g) MarkRepaired(g);
  metrics_.OnNodeChanged(node);
  if (!spares_.empty()) AfterRepair(node);
  if (!from_trace) {
    const std::vector<double>& by_type = gpu_level ? f.gpu_mtbf_seconds : f.node_mtbf_seconds;
    const double mean = by_type[cluster_.node(node).gpu_type];
    Push(now_ + fault_rng_.Next(mean), kFaultRank, e.job, e.aux & ~kFaultRepair);
  }
}

void Engine::FailJob(JobId id, int cause, double detection, double restart) {
  JobRun& run = runs_[id];
  ActiveRun& live = Live(id);
  const double lost_before = costs_[id].lost_gpu_seconds;
  StopRunning(id, IntervalEnd::kFailure);
  live.allocation.gpus.clear();
  run.state = JobState::kQueued;
  ++costs_[id].restarts;
  live.overhead_left = restart + RestoreSeconds(id);  // restart from the checkpoint
  CauseTotals& totals = failure_log_.totals(cause);
  ++totals.interruptions;
  totals.recompute_gpu_seconds += costs_[id].lost_gpu_seconds - lost_before;
  JobReliability& rel = failure_log_.job(id);
  rel.interrupted_at = now_;
  rel.pending_detection = detection;
  rel.wait_cause = cause;
  rel.overhead_cause = -1;
  QueueInsertSorted(id);
  policy_.OnRequeue(*this, id);
}

int Engine::InterruptVictims(int cause, double detection, double restart, bool takes_out,
                             int first_gpu, int last_gpu) {
  hit_nodes_.clear();
  if (takes_out && !spares_.empty()) {
    // The failed nodes that ran a job hit, with the job (before the jobs let go of them).
    for (JobId id : victims_) {
      const Allocation& a = Live(id).allocation;
      if (a.milli > 0) continue;  // jobs on shares are not moved to spares
      ForEachNode(cluster_, a.gpus, [&](int node, int) {
        const Node& n = cluster_.node(node);
        if (n.first_gpu < last_gpu && n.first_gpu + n.gpu_count > first_gpu) {
          hit_nodes_.emplace_back(node, id);
        }
      });
    }
    std::sort(hit_nodes_.begin(), hit_nodes_.end());
  }
  for (JobId id : victims_) FailJob(id, cause, detection, restart);
  int used = 0;
  for (size_t i = 0; i < hit_nodes_.size(); ++i) {
    const int failed = hit_nodes_[i].first;
    if (i > 0 && hit_nodes_[i - 1].first == failed) continue;  // one spare per failed node
    // A pool node (it entered the pool while a job still ran on its other GPUs) is out of
    // service already: its job goes back to the queue and no spare is used for it.
    if (spares_.InPool(failed)) continue;
    const Node& x = cluster_.node(failed);
    // The lowest usable spare of the group that this failure does not take out too.
    int spare = -1;
    for (const int candidate : spares_.Usable(x.group)) {
      const Node& c = cluster_.node(candidate);
      if (c.first_gpu >= last_gpu || c.first_gpu + c.gpu_count <= first_gpu) {
        spare = candidate;
        break;
      }
    }
    if (spare < 0) {
      owed_[x.group].emplace(failed, cause);  // the group's next usable spare is its
      continue;
    }
    ReleaseSpare(spare);
    if (!spares_.InPool(failed)) {
      // A node still owed a spare for an earlier failure (repaired in part, it ran a job on its
      // other GPUs) is owed nothing more once it is in the pool.
      owed_[x.group].erase(failed);
      spares_.Enter(failed);
      for (int g = x.first_gpu; g < x.first_gpu + x.gpu_count; ++g) {
        if (resources_.IsGpuFree(g)) HoldForPool(g);
      }
    }
    metrics_.OnNodeChanged(failed);
    ++used;
    // The jobs that ran on the failed node restart once the spare is in.
    const double ready = detection + cluster_.spec().groups[x.group].swap_seconds;
    for (size_t j = i; j < hit_nodes_.size() && hit_nodes_[j].first == failed; ++j) {
      JobReliability& rel = failure_log_.job(hit_nodes_[j].second);
      rel.pending_detection = std::max(rel.pending_detection, ready);
    }
  }
  failure_log_.totals(cause).swaps += used;
  return used;
}

void Engine::FleetFault(const Event& e) {
  const int c = static_cast<int>(e.aux >> 4);
  const FailureCause& cause = fleet_->cause(c);
  ++state_version_;  // GPUs are taken out or given back: the head's derived reason is stale
  if (e.aux & kFaultRepair) {
    Record(now_, kKindRepair, e.job);
    AccrueDownTime();
    const FailureStrike s = fleet_->Strike(c, e.job);
    for (int node = s.first_node; node < s.first_node + s.node_count; ++node) {
      if (cause.domain != FailureDomain::kGpu && --node_down_[node] == 0) --down_nodes_;
    }
    for (int g = s.first_gpu; g < s.first_gpu + s.gpu_count; ++g) MarkRepaired(g);
    for (int node = s.first_node; node < s.first_node + s.node_count; ++node) {
      metrics_.OnNodeChanged(node);
      if (!spares_.empty()) AfterRepair(node);
    }
    return;
  }
  Record(now_, kKindFailure, e.job);
  // The next event of this cause first, so that the draws keep their order whatever happens.
  const int unit = fleet_->DrawUnit(c);
  Push(now_ + fleet_->NextGap(c), kFaultRank, c, e.aux);
  const FailureStrike s = fleet_->Strike(c, unit);
  const int first = s.first_gpu;
  const int last = s.first_gpu + s.gpu_count;
  if (s.whole_cluster) {
    victims_.clear();
    for (JobId id : running_) {
      if (!Live(id).allocation.gpus.empty()) victims_.push_back(id);  // CPU-only jobs go on
    }
    std::sort(victims_.begin(), victims_.end());
  } else {
    CollectGpuVictims(
        first, last, holder_, resources_, gpu_down_, spares_, running_,
        [&](JobId id) -> const Allocation& { return Live(id).allocation; }, &victims_);
  }
  // A failure that takes nothing out and hits no job did nothing (a software failure where no
  // job runs): not counted.
  if (!s.takes_out && victims_.empty()) return;
  AccrueDownTime();
  ++failures_;
  const int spares_used = InterruptVictims(c, cause.detection_seconds, cause.restart_seconds,
                                           s.takes_out, first, last);
  const double repair = cause.RepairSeconds(options_.faults.mttr_seconds);
  if (s.takes_out) {
    for (int node = s.first_node; node < s.first_node + s.node_count; ++node) {
      if (cause.domain != FailureDomain::kGpu && node_down_[node]++ == 0) ++down_nodes_;
    }
    for (int g = first; g < last; ++g) MarkDown(g);
    for (int node = s.first_node; node < s.first_node + s.node_count; ++node) {
      metrics_.OnNodeChanged(node);
    }
    Push(now_ + repair, kFaultRank, unit, e.aux | kFaultRepair);
  }
  FailureEvent event;
  event.time = now_;
  event.cause = c;
  event.first_node = s.first_node;
  event.node_count = s.whole_cluster ? cluster_.node_count() : s.node_count;
  event.first_gpu = s.whole_cluster ? 0 : s.first_gpu;
  event.gpus_out = s.takes_out ? s.gpu_count : 0;
  event.spares_used = spares_used;
  event.repair_seconds = repair;
  failure_log_.Record(event, victims_);
}

void Engine::AddOutOfService(int gpu) {
  failed_gpus_.insert(std::lower_bound(failed_gpus_.begin(), failed_gpus_.end(), gpu), gpu);
  ++failed_gpus_version_;
}

void Engine::RemoveOutOfService(int gpu) {
  failed_gpus_.erase(std::lower_bound(failed_gpus_.begin(), failed_gpus_.end(), gpu));
  ++failed_gpus_version_;
}

void Engine::MarkDown(int gpu) {
  CHECK(gpu_down_[gpu] < 255, "more than 255 overlapping failures of one GPU");
  if (gpu_down_[gpu]++ != 0) return;
  ++down_gpus_;
  if (spares_.IsHeld(gpu)) {
    spares_.Unhold(gpu);  // allocated and out of service already
    return;
  }
  const int one[] = {gpu};
  resources_.Allocate(one);
  AddOutOfService(gpu);
}

void Engine::MarkRepaired(int gpu) {
  if (--gpu_down_[gpu] != 0) return;
  --down_gpus_;
  if (spares_.InPool(cluster_.NodeOfGpu(gpu))) {
    spares_.Hold(gpu);  // stays allocated and out of service, now for the pool
    return;
  }
  const int one[] = {gpu};
  resources_.Release(one);
  RemoveOutOfService(gpu);
}

void Engine::HoldForPool(int gpu) {
  const int one[] = {gpu};
  resources_.Allocate(one);
  spares_.Hold(gpu);
  AddOutOfService(gpu);
}

void Engine::AfterRepair(int node) {
  const Node& n = cluster_.node(node);
  std::map<int, int>& owed = owed_[n.group];
  if (const auto it = owed.find(node); it != owed.end()) {
    bool whole = true;
    for (int g = n.first_gpu; g < n.first_gpu + n.gpu_count; ++g) whole = whole && !gpu_down_[g];
    if (whole) owed.erase(it);  // back in service itself
  }
  ServeOwedSpares(n.group);
}

void Engine::ServeOwedSpares(int group) {
  std::map<int, int>& owed = owed_[group];
  while (!owed.empty()) {
    const int spare = spares_.FirstUsable(group);
    if (spare < 0) return;
    const auto [failed, cause] = *owed.begin();
    owed.erase(owed.begin());
    if (spares_.InPool(failed)) continue;  // in the pool meanwhile: nothing owed
    ReleaseSpare(spare);
    spares_.Enter(failed);
    const Node& x = cluster_.node(failed);
    for (int g = x.first_gpu; g < x.first_gpu + x.gpu_count; ++g) {
      if (resources_.IsGpuFree(g)) HoldForPool(g);
    }
    metrics_.OnNodeChanged(failed);
    ++failure_log_.totals(cause).swaps;
  }
}

void Engine::ReleaseSpare(int node) {
  const Node& n = cluster_.node(node);
  for (int g = n.first_gpu; g < n.first_gpu + n.gpu_count; ++g) {
    spares_.Unhold(g);
    const int one[] = {g};
    resources_.Release(one);
    RemoveOutOfService(g);
  }
  spares_.Leave(node);
  metrics_.OnNodeChanged(node);
}

void Engine::ScheduleOverflow(int gpu, bool include_now) {
  double t = shared_memory_->NextOverflow(gpu, now_, include_now);
  // An arrival-only run without departures ends at its last arrival: no overflow after it.
  if (options_.no_departures && !trace_.jobs.empty() && t > trace_.jobs.back().submit_time) {
    t = std::numeric_limits<double>::infinity();
  }
  next_overflow_[gpu] = t;
  if (t < std::numeric_limits<double>::infinity()) {
    Push(t, kTimerRank, kOverflowJob, static_cast<uint32_t>(gpu));
  }
}

void Engine::Overflow(int gpu) {
  if (next_overflow_[gpu] != now_) return;  // stale: the GPU's jobs changed since
  next_overflow_[gpu] = std::numeric_limits<double>::infinity();
  plans_held_ = false;  // the victims go back to the queue: promises are estimates
  victims_ = shared_memory_->Victims(gpu, now_);
  // Each victim runs out of memory: it loses the work since its last checkpoint and goes back to
  // the queue, as a job whose GPU failed (FailJob), without taking the GPU out; past its
  // resubmissions it ends oom-failed (its user gives up).
  if (overflow_kills_.empty()) overflow_kills_.assign(runs_.size(), 0);
  overflowing_ = true;
  for (const JobId id : victims_) {
    if (++overflow_kills_[id] <= options_.peaks.oom_retries) {
      FailJob(id, oom_cause_, 0, 0);
      continue;
    }
    ++failure_log_.totals(oom_cause_).interruptions;  // an oom_kill too, though it ends the job
    StopRunning(id, IntervalEnd::kOom);
    Live(id).allocation.gpus.clear();
    EndOomFailed(id, "out of GPU memory under over-commit " + std::to_string(overflow_kills_[id]) +
                         " times (co-located peaks on GPU " + std::to_string(gpu) +
                         "; --oom-retries " + std::to_string(options_.peaks.oom_retries) +
                         ", docs/overcommit.md)");
  }
  overflowing_ = false;
  FailureEvent event;
  event.time = now_;
  event.cause = oom_cause_;
  event.first_node = cluster_.NodeOfGpu(gpu);
  event.node_count = 1;
  event.first_gpu = gpu;
  std::sort(victims_.begin(), victims_.end());
  failure_log_.Record(event, victims_);
  ScheduleOverflow(gpu, false);
}

void Engine::EndOomFailed(JobId id, std::string reason) {
  JobRun& run = runs_[id];
  reasons_[id] = std::move(reason);
  run.state = JobState::kOomFailed;
  run.end_time = now_;
  ++jobs_done_;
  if (site_) site_->OnDone(id);
  policy_.OnCompletion(*this, id);
  Deactivate(id);
}

void Engine::OomFail(JobId id) {
  plans_held_ = false;  // the job goes back to the queue: promises after this are estimates
  JobRun& run = runs_[id];
  ActiveRun& live = Live(id);
  ModelRun& mrun = model_runs_[id];
  const Allocation allocation = live.allocation;
  StopRunning(id, IntervalEnd::kOom);
  live.allocation.gpus.clear();
  ++mrun.oom_failures;
  if (mrun.oom_failures > options_.models->options().oom_retries || mrun.batch <= 1) {
    const ModelRuntime& models = *options_.models;
    const GpuSpec& gpu = cluster_.catalog().gpu(allocation.gpu_type);
    const bool fits_layout =
        models.layout(id, allocation.gpu_type) != nullptr &&
        static_cast<int>(allocation.gpus.size()) >= models.min_gpus(id, allocation.gpu_type);
    std::string need = "does not fit at all";
    if (fits_layout) {
      char text[96];
      std::snprintf(text, sizeof text, "needs %.1f GiB per GPU",
                    models.MemoryBytes(id, allocation.gpu_type, mrun.batch) / (1u << 30));
      need = text;
    }
    EndOomFailed(id, "out of GPU memory: " + models.model(id)->name + " at batch " +
                         std::to_string(mrun.batch) + " per GPU " + need + " on " + gpu.name +
                         " (" + std::to_string(mrun.oom_failures) + " attempts)");
    return;
  }
  mrun.batch = std::max(1, mrun.batch / 2);  // the user's retry: half the batch
  run.state = JobState::kQueued;
  QueueInsertSorted(id);
  policy_.OnRequeue(*this, id);
}

double Engine::JobMemory(JobId id, const Allocation& allocation, int batch, bool* oom) const {
  *oom = false;
  const GpuSpec& gpu = cluster_.catalog().gpu(allocation.gpu_type);
  const double gpu_bytes = GpuMemoryBytes(gpu);
  const ModelRuntime& models = *options_.models;
  if (models.model(id) == nullptr || batch < 1) {
    return allocation.milli > 0 ? gpu_bytes * allocation.milli / 1000.0 : gpu_bytes;
  }
  const int type = allocation.gpu_type;
  // Memory already held on the fullest of the GPUs (other jobs' shares).
  double used = 0;
  if (allocation.milli > 0) {
    for (int g : allocation.gpus) used = std::max(used, gpu_memory_[g]);
  }
  const double reserve = gpu_bytes - models.CapacityBytes(type);
  if (static_cast<int>(allocation.gpus.size()) < models.min_gpus(id, type) ||
      models.min_gpus(id, type) == 0) {
    *oom = true;
    return std::max(0.0, gpu_bytes - used);
  }
  const double need = models.MemoryBytes(id, type, batch);
  if (used + need + reserve > gpu_bytes) {
    *oom = true;
    return std::max(0.0, gpu_bytes - used);
  }
  return need;
}

void Engine::PlaceMemory(JobId id, int sign) {
  const ActiveRun& live = Live(id);
  const ModelRun& mrun = model_runs_[id];
  const size_t working = live.request.whole_nodes ? static_cast<size_t>(live.request.gpus)
                                                  : live.allocation.gpus.size();
  for (size_t i = 0; i < live.allocation.gpus.size(); ++i) {
    const int g = live.allocation.gpus[i];
    // The idle GPUs of a whole-node job are held whole: nobody else can use their memory.
    const double bytes = i < working
                             ? mrun.memory_per_gpu
                             : GpuMemoryBytes(cluster_.catalog().gpu(live.allocation.gpu_type));
    gpu_memory_[g] += sign * bytes;
    if (gpu_memory_[g] < 0) gpu_memory_[g] = 0;  // rounding of sums of shares
    metrics_.OnGpuMemory(g, sign * bytes);
  }
}

double Engine::RateOf(JobId id, const Allocation& allocation, int batch) const {
  // A CPU-only job runs its trace duration: the runtime models describe GPU work.
  if (allocation.gpus.empty()) return 1.0;
  // A MIG job's duration is its run time on the instance it names
  // (docs/mig.md#what-an-instance-counts-as).
  if (allocation.mig_profile >= 0) return 1.0;
  double rate = runtime_.Rate(trace_.jobs[id], allocation);
  if (options_.models != nullptr) {
    const ModelRuntime& models = *options_.models;
    if (batch >= 1) {
      rate *= models.RateFactor(id, allocation.gpu_type, static_cast<int>(allocation.gpus.size()),
                                batch);
    }
    rate *= models.ShareSpeed(trace_.jobs[id], allocation.milli);
  } else if (allocation.milli > 0) {  // a whole GPU's factor is 1
    static const double kColocationSpeed = ModelRuntimeOptions{}.colocation_speed;
    // Over-commit reserves less than the share; the job still runs at its share's speed
    // (docs/overcommit.md#what-is-not-modelled).
    const int milli = options_.memory_overcommit > 1.0 && Live(id).request.milli == allocation.milli
                          ? trace_.jobs[id].gpu_milli
                          : allocation.milli;
    rate *= ShareSpeed(trace_.jobs[id], milli, kColocationSpeed);
  }
  // An elastic start on fewer GPUs than requested, for a job the goodput model does not cover
  // (RateFactor is 1 for it): linear data-parallel scaling, n / R of the rate.
  const int requested = Live(id).request.gpus;
  const int n = static_cast<int>(allocation.gpus.size());
  if (elastic_ && n < requested && allocation.milli == 0 &&
      (options_.models == nullptr || !options_.models->ScalesWithGpus(id))) {
    rate *= static_cast<double>(n) / requested;
  }
  return rate;
}

void Engine::Reject(JobId id, std::string reason) {
  JobRun& run = runs_[id];
  run.state = JobState::kRejected;
  run.end_time = now_;
  reasons_[id] = std::move(reason);
  ++jobs_done_;
  if (site_) site_->OnDone(id);
  Hash(now_, kKindReject, id);
  Deactivate(id);
}

ActiveRun& Engine::Activate(JobId id) {
  JobRun& run = runs_[id];
  CHECK(run.active < 0, "job " + trace_.jobs[id].id + " arrived twice");
  int32_t slot;
  if (!free_active_.empty()) {
    slot = free_active_.back();
    free_active_.pop_back();
  } else {
    slot = active_slots_++;
    if ((slot >> kActiveChunkBits) == static_cast<int32_t>(active_chunks_.size())) {
      active_chunks_.push_back(std::make_unique<ActiveRun[]>(kActiveChunk));
    }
  }
  run.active = slot;
  ActiveRun& live = ActiveSlot(slot);
  live = ActiveRun{};
  live.request = RequestOf(id);
  live.work_left = trace_.jobs[id].duration;
  return live;
}

void Engine::Deactivate(JobId id) {
  JobRun& run = runs_[id];
  if (options_.on_job_end) options_.on_job_end(id, Live(id));
  free_active_.push_back(run.active);
  run.active = -1;
}

void Engine::ActiveMissing(JobId id) const {
  PolicyBug("the request, allocation or progress of job " + trace_.jobs[id].id + ", which is " +
            JobStateName(runs_[id].state) + " (only a queued or running job has them)");
}

void Engine::Arrive(JobId id) {
  const ActiveRun& live = Activate(id);
  const Job& job = trace_.jobs[id];
  if (options_.models != nullptr && options_.models->model(id) != nullptr) {
    // A model too big for the job's GPUs of every allowed type can never run.
    const ModelRuntime& models = *options_.models;
    int fewest = 0;
    for (int type : cluster_.gpu_types()) {
      if (!live.request.AllowsType(type)) continue;
      const int need = models.min_gpus(id, type);
      if (need > 0 && (fewest == 0 || need < fewest)) fewest = need;
    }
    if (fewest == 0 || fewest > job.gpus) {
      Reject(id, "model " + models.model(id)->name + " needs " +
                     (fewest == 0 ? std::string("more than 1024") : std::to_string(fewest)) +
                     " GPUs of one allowed type to hold one sample; requests " +
                     std::to_string(job.gpus));
      return;
    }
  }
  if (live.request.gpus <= 0 && live.request.milli <= 0) {
    // A job without GPUs: placed on one node only if it is a CPU-only job the run can hold
    // (docs/resources.md#cpu-only-jobs); otherwise rejected with the reason why not.
    if (std::string why = CpuOnlyRejection(id); !why.empty()) {
      Reject(id, std::move(why));
      return;
    }
    Enqueue(id);
    return;
  }
  if (job.mig_profile != 0) {
    // A MIG job fits the empty cluster if some GPU in MIG mode of an allowed type offers its
    // profile (docs/mig.md).
    if (!policy_.PlacesMig()) {
      Reject(id, "policy " + policy_name_ + " does not place MIG instances (docs/mig.md)");
      return;
    }
    if (std::string why =
            MigRejection(cluster_, MigProfileName(job.mig_profile), live.request.type_mask);
        !why.empty()) {
      Reject(id, std::move(why));
      return;
    }
    Allocation scratch;
    if (!placement().Find(empty_resources_, live.request, &scratch)) {
      Reject(id, RejectionReason(id));
      return;
    }
    Enqueue(id);
    return;
  }
  // Requests of one shape fit the empty cluster alike (host demands bind only under host limits).
  PlacementRequest shaped = live.request;
  if (!resources_.host_limited()) shaped.host = HostDemand{};
  const RequestShape key = ShapeOf(shaped);
  if (key != last_fits_key_) {
    auto it = fits_empty_cache_.find(key);
    if (it == fits_empty_cache_.end()) {
      Allocation scratch;
      const bool fits =
          live.request.gpus > 0 && placement().Find(empty_resources_, live.request, &scratch);
      it = fits_empty_cache_.emplace(key, fits).first;
    }
    last_fits_key_ = key;
    last_fits_ = it->second;
  }
  if (!last_fits_) {
    Reject(id, RejectionReason(id));
    return;
  }
  Enqueue(id);
}

void Engine::Enqueue(JobId id) {
  if (site_) {
    const Job& job = trace_.jobs[id];
    if (std::string why = site_->Admit(id, now_, policy_.RequestedWalltime(job)); !why.empty()) {
      Reject(id, std::move(why));
      return;
    }
  }
  runs_[id].state = JobState::kQueued;
  QueueAppend(id);
  policy_.OnArrival(*this, id);
}

std::string Engine::CpuOnlyRejection(JobId id) const {
  // Without host limits nothing tracks what it would hold: the reason GPU-only runs have always
  // given (decided before the walk over every node, which a log of many such jobs on a large
  // cluster would repeat for each).
  if (!resources_.host_limited()) return RejectionReason(id);
  const ActiveRun& live = Live(id);
  const HostDemand& host = live.request.host;
  // What the job would hold: its stated demands in the dimensions some node declares.
  int32_t most_cpu = 0;
  int32_t most_memory = 0;
  bool holds = false;
  bool fits = false;  // some node of an allowed type takes it on the empty cluster
  for (int i = 0; i < cluster_.node_count(); ++i) {
    const Node& node = cluster_.node(i);
    if (!live.request.AllowsType(node.gpu_type)) continue;
    most_cpu = std::max(most_cpu, NodeCpuMilli(node));
    most_memory = std::max(most_memory, NodeMemoryMib(node));
    holds = holds || !HostChargeOn(node, host, 0, 0, 0).empty();
    fits = fits || CpuOnlyFits(empty_resources_, i, live.request);
  }
  if (!holds) return RejectionReason(id);
  char demand[160];
  std::snprintf(demand, sizeof demand, "requests 0 GPUs with %g CPUs and %g GiB of host memory",
                host.cpu_milli / 1000.0, host.memory_mib / 1024.0);
  // Every registered placement places them (a test checks it); a strategy made elsewhere may not.
  if (!placement().PlacesCpuOnly()) {
    return std::string(demand) +
           "; the run's placement does not place CPU-only jobs (docs/resources.md#cpu-only-jobs)";
  }
  // Every placement that places CPU-only jobs chooses among the nodes CpuOnlyFits (the placement
  // is not asked here: its Find may draw random numbers).
  if (fits) return "";
  char most[160];
  std::snprintf(most, sizeof most, " (at most %g CPUs and %g GiB per node of an allowed type)",
                most_cpu / 1000.0, most_memory / 1024.0);
  return std::string(demand) + "; no node of this cluster can take it" + most;
}

std::string Engine::RejectionReason(JobId id) const {
  const ActiveRun& live = Live(id);
  const Job& job = trace_.jobs[id];
  int allowed = 0;
  for (int type : cluster_.gpu_types()) {
    if (live.request.AllowsType(type)) allowed += cluster_.GpusOfType(type);
  }
  const std::string what = "requests " + std::to_string(job.gpus) + " GPUs" +
                           (job.gpu_type.empty() ? "" : " of type " + job.gpu_type.str());
  if (job.gpus == 0) {
    // A reader marks a record it could not complete with a status suffix (traces/README.md);
    // that is the reason, not the cluster.
    const std::string& status = job.trace_status.str();
    const size_t colon = status.rfind(':');
    if (colon != std::string::npos && colon + 1 < status.size()) {
      return what + ": incomplete record (" + status.substr(colon + 1) + ")";
    }
  }
  if (const int group = TensorGroup(live.request); group > 1) {
    // docs/reliability.md#model-parallelism-in-traces: each tensor-parallel group within one node.
    int widest = 0;
    for (const Node& node : cluster_.nodes()) {
      if (live.request.AllowsType(node.gpu_type)) widest = std::max(widest, node.gpu_count);
    }
    if (widest < group) {
      return what + " in tensor-parallel groups of " + std::to_string(group) +
             ", each within one node, but nodes of allowed types hold at most " +
             std::to_string(widest) + " GPUs; no placement exists on this cluster";
    }
  }
  Allocation scratch;
  if (live.request.constraint != 0) {
    // The GPUs fit without the job's locality and node limits: name the limits.
    PlacementRequest free_of_limits = live.request;
    free_of_limits.constraint = 0;
    if (placement().Find(empty_resources_, free_of_limits, &scratch)) {
      return what + "; no placement of this cluster meets " + constraints_->Describe(live.request) +
             " (docs/deadlines.md#constraints)";
    }
  }
  PlacementRequest gpus_only = live.request;
  gpus_only.host = HostDemand{};  // an unstated demand never binds on the empty cluster
  if (resources_.host_limited() && live.request.gpus > 0 &&
      placement_.Find(empty_resources_, gpus_only, &scratch)) {
    // The GPUs fit: name the host dimension(s) that do not, with the most a node of an allowed
    // type offers.
    int32_t most_cpu = 0;
    int32_t most_memory = 0;
    for (const Node& node : cluster_.nodes()) {
      if (!live.request.AllowsType(node.gpu_type)) continue;
      most_cpu = std::max(most_cpu, NodeCpuMilli(node));
      most_memory = std::max(most_memory, NodeMemoryMib(node));
    }
    std::string short_of;
    char text[160];
    PlacementRequest one = gpus_only;
    one.host.cpu_milli = live.request.host.cpu_milli;
    if (one.host.cpu_milli > 0 && !placement_.Find(empty_resources_, one, &scratch)) {
      std::snprintf(text, sizeof text, "%g CPUs (at most %g per node of an allowed type)",
                    one.host.cpu_milli / 1000.0, most_cpu / 1000.0);
      short_of = text;
    }
    one = gpus_only;
    one.host.memory_mib = live.request.host.memory_mib;
    if (one.host.memory_mib > 0 && !placement_.Find(empty_resources_, one, &scratch)) {
      std::snprintf(text, sizeof text,
                    "%g GiB of host memory (at most %g GiB per node of an allowed type)",
                    one.host.memory_mib / 1024.0, most_memory / 1024.0);
      short_of += (short_of.empty() ? "" : " and ") + std::string(text);
    }
    if (short_of.empty()) short_of = "its CPUs and host memory together";
    return what + " with " + short_of + "; no placement exists on this cluster";
  }
  return what + "; no placement exists on this cluster (" + std::to_string(allowed) +
         " GPUs of allowed types)";
}

void Engine::StopRunning(JobId id, IntervalEnd why) {
  ++state_version_;
  AccrueBorrowed(id);
  JobRun& run = runs_[id];
  ActiveRun& live = Live(id);
  const bool failed = why == IntervalEnd::kFailure;
  const double ran = now_ - live.last_start;
  const double n = HeldGpus(live.allocation);
  if (options_.record_allocations) {
    const Allocation& a = live.allocation;
    AllocationInterval interval;
    interval.start = live.last_start;
    interval.end = now_;
    interval.gpu_offset = allocations_.gpus.size();
    interval.job = id;
    interval.gpu_count = static_cast<uint32_t>(a.gpus.size());
    interval.gpu_type = static_cast<int16_t>(a.gpu_type);
    interval.milli = static_cast<uint16_t>(a.milli);
    interval.why = why;
    allocations_.intervals.push_back(interval);
    allocations_.gpus.insert(allocations_.gpus.end(), a.gpus.begin(), a.gpus.end());
  }
  if (!oom_pending_.empty() && oom_pending_[id]) {
    // Started at a batch that does not fit: no progress and no checkpoint; the time is wasted
    // (the restore still to pay stays due).
    oom_pending_[id] = 0;
    model_runs_[id].oom_gpu_seconds += ran * n;
  } else {
    const double overhead = std::min(ran, live.overhead_left);  // paid before any progress
    live.overhead_left -= overhead;
    if (overhead > 0) costs_[id].overhead_seconds += overhead;
    if (failure_log_.has_jobs()) ChargeRestartOverhead(id, overhead, n);
    const double active = ran - overhead;
    double computed = active;
    double done = 0;   // checkpoints completed in this interval
    double cycle = 0;  // computing interval + save
    const FaultOptions& f = options_.faults;
    const double interval = CheckpointInterval(id);
    // A CPU-only job saves no checkpoints: failures take GPUs, so it never needs one.
    if (f.checkpoints() && !live.allocation.gpus.empty() && interval < FaultOptions::kNever) {
      // From the start of this interval: compute I, save for S, compute I, save for S, ...
      cycle = interval + PauseSeconds(id);
      done = std::floor(active / cycle);
      computed = done * interval + std::min(active - done * cycle, interval);
      if (active > computed) costs_[id].checkpoint_seconds += active - computed;
      checkpoint_gpu_seconds_ += (active - computed) * n;
    }
    // The checkpoints a restart may use: all completed ones, but an asynchronous one only once
    // its write is done, lag seconds after its pause.
    double usable = done;
    if (const double lag = LagSeconds(id); lag > 0 && done > 0) {
      usable = std::min(done, std::floor(std::max(0.0, active - lag) / cycle));
    }
    const double saved = usable > 0 ? usable * interval : 0;  // what usable saves cover
    if (failed) {
      // Lost: the computing after the last usable save (all of this interval's computing if
      // there is none). The restore paid first is restart overhead, never lost work.
      const double durable = live.last_start + overhead + (usable > 0 ? usable * cycle : 0);
      costs_[id].lost_gpu_seconds += (now_ - durable) * n;
    }
    live.work_left = std::max(0.0, live.work_left - (failed ? saved : computed) * live.rate);
    if (std::vector<double>& productive = failure_log_.productive_seconds(); !productive.empty()) {
      productive[id] += failed ? saved : computed;
    }
  }
  run.run_seconds += ran;
  run.gpu_seconds += ran * n;
  finished_gpu_seconds_ += ran * n;
  run.energy_joules += ran * n * cluster_.catalog().gpu(live.allocation.gpu_type).tdp_watts;
  resources_.ReleaseJob(live.request.host, live.allocation.gpus, live.allocation.milli,
                        live.allocation.node, live.request.constraint, live.allocation.mig_profile,
                        live.allocation.mig_start);
  if (!holder_.empty() && live.allocation.milli == 0) {
    for (int g : live.allocation.gpus) holder_[g] = kNoJob;
  }
  if (!gpu_memory_.empty()) PlaceMemory(id, -1);
  if (shared_memory_ && live.request.milli > 0 && live.allocation.milli > 0 &&
      live.allocation.mig_profile < 0) {
    shared_memory_->Remove(live.allocation.gpus[0], id);
    if (!overflowing_) ScheduleOverflow(live.allocation.gpus[0], true);
  }
  metrics_.OnRelease(live.allocation, live.request.host);
  if (site_) site_->OnStop(id, live.request.gpus);
  if (!spares_.empty()) DrainIntoPool(live.allocation.gpus);
  RunningRemove(id);
  run.version = (run.version + 1) & kVersionMask;
}

void Engine::Finish(JobId id, bool walltime_kill) {
  JobRun& run = runs_[id];
  ActiveRun& live = Live(id);
  StopRunning(id, walltime_kill ? IntervalEnd::kTimeout : IntervalEnd::kFinish);
  // The event says why it was scheduled; the work left is not compared with zero, as rounding
  // of (now + work / rate) - now at large times would misclassify completions.
  if (walltime_kill) {
    run.state = JobState::kTimeout;
    reasons_[id] = "killed at its requested wall time";
  } else {
    live.work_left = 0;
    run.state = JobState::kCompleted;
  }
  run.end_time = now_;
  // The GPU list's storage goes to the next start (TryPlace), or is freed.
  if (spare_gpu_lists_.size() < kSpareGpuLists && live.allocation.gpus.capacity() > 0) {
    live.allocation.gpus.clear();
    spare_gpu_lists_.push_back(std::move(live.allocation.gpus));
    live.allocation.gpus = std::vector<int>();
  } else {
    live.allocation.gpus.clear();
    live.allocation.gpus.shrink_to_fit();
  }
  live.allocation.node = -1;
  ++jobs_done_;
  if (site_) site_->OnDone(id);
  policy_.OnCompletion(*this, id);
  Deactivate(id);
}

bool Engine::TryPlace(JobId id, Allocation* out) const {
  out->node = -1;
  if (out->gpus.capacity() == 0 && !spare_gpu_lists_.empty()) {
    out->gpus = std::move(spare_gpu_lists_.back());
    spare_gpu_lists_.pop_back();
  }
  return active_placement_->Find(resources_, Live(id).request, out);
}

void Engine::ScheduleFinish(JobId id) {
  if (options_.no_departures) return;  // arrival-only placement: held to the end of the run
  JobRun& run = runs_[id];
  ActiveRun& live = Live(id);
  const Job& job = trace_.jobs[id];
  const double walltime = policy_.RequestedWalltime(job);
  // A site may not kill, or kill after a grace (Slurm's OverTimeLimit).
  const bool kills = options_.enforce_walltime && (!site_ || site_->kill_at_walltime());
  const double grace = site_ ? site_->over_time_limit_seconds() : 0.0;
  const double kill = kills && walltime >= 0
                          ? now_ + std::max(0.0, walltime + grace - run.run_seconds)
                          : std::numeric_limits<double>::infinity();
  if (!oom_pending_.empty() && oom_pending_[id]) {
    const double oom = now_ + options_.models->options().oom_startup_seconds;
    if (kill < oom) {
      Push(kill, kFinishRank, id, run.version | kKillBit);  // its wall time ends first
    } else {
      Push(oom, kFinishRank, id, run.version | kOomBit);
    }
    return;
  }
  const double compute = live.work_left / live.rate;
  double end = now_ + live.overhead_left + compute;
  const FaultOptions& f = options_.faults;
  const double interval = CheckpointInterval(id);
  if (f.checkpoints() && !live.allocation.gpus.empty() && compute > interval) {
    // A save after every full interval of computing, none after the last stretch.
    end += (std::ceil(compute / interval) - 1) * PauseSeconds(id);
  }
  // Plans hold while no job runs longer than planned: its requested wall time, else its trace
  // duration (what the backfilling policies plan with).
  if (plans_held_) {
    const double planned = walltime >= 0 ? walltime : job.duration;
    const double planned_end = now_ + std::max(0.0, planned - run.run_seconds);
    if (std::min(kill, end) > planned_end + 1e-9 * std::max(1.0, std::abs(planned_end))) {
      plans_held_ = false;
    }
  }
  if (kill < end) {
    Push(kill, kFinishRank, id, run.version | kKillBit);
    return;
  }
  Push(end, kFinishRank, id, run.version);
}

void Engine::PolicyBug(const std::string& what) const {
  throw InternalError("policy " + policy_name_ +
                      " made an invalid decision at t=" + std::to_string(now_) + ": " + what);
}

void Engine::ValidateAllocation(JobId id, const Allocation& allocation, const char* verb,
                                bool own_gpus_allowed) const {
  const ActiveRun& live = Live(id);
  // The message is built only on failure: this runs for every start.
  auto fail = [&](const std::string& what) {
    PolicyBug(std::string(verb) + " job " + trace_.jobs[id].id + ": " + what);
  };
  if (allocation.gpus.empty()) {
    // A CPU-only job on one node (docs/resources.md#cpu-only-jobs).
    if (allocation.node < 0) fail("no GPUs");
    if (live.request.gpus > 0 || live.request.milli > 0) fail("no GPUs");
    if (allocation.node >= cluster_.node_count())
      fail("no node " + std::to_string(allocation.node));
    if (allocation.gpu_type != cluster_.node(allocation.node).gpu_type) {
      fail("a GPU type other than its node's");
    }
    if (allocation.milli != 0 || allocation.batch != 0) fail("a GPU share or a batch");
    if (!resources_.HostFitsCpuOnly(allocation.node, live.request.host)) {
      fail("the free CPUs or host memory of node " + std::to_string(allocation.node) +
           " cannot take it");
    }
    if (live.request.constraint != 0 &&
        !resources_.SpreadAllowsNode(constraints_->spread(live.request.constraint),
                                     allocation.node)) {
      fail("against its spread rule: another job of its group runs in the domain of node " +
           std::to_string(allocation.node));
    }
    return;
  }
  if (live.request.gpus <= 0 && live.request.milli <= 0) fail("GPUs for a CPU-only job");
  // MIG (docs/mig.md): a job naming a profile holds one instance of it at a documented start on
  // free slices of a GPU in MIG mode; any other job never holds one.
  if (IsMigRequest(live.request) != (allocation.mig_profile >= 0)) {
    fail(allocation.mig_profile >= 0 ? "a MIG instance it did not ask for"
                                     : "no MIG instance although it names a MIG profile");
  }
  if (allocation.mig_profile >= 0) {
    if (allocation.gpus.size() != 1 || allocation.gpu_type < 0 ||
        allocation.gpus[0] < 0 || allocation.gpus[0] >= cluster_.total_gpus()) {
      fail("a MIG instance not on one GPU");
    }
    const int g = allocation.gpus[0];
    const auto profiles = GpuMigProfiles(cluster_, g);
    if (allocation.mig_profile >= static_cast<int>(profiles.size()) ||
        MigProfileName(trace_.jobs[id].mig_profile) != profiles[allocation.mig_profile].name) {
      fail("a MIG instance of another profile than its " + MigProfileName(trace_.jobs[id].mig_profile));
    }
    if (allocation.milli != MigMilli(profiles[allocation.mig_profile])) {
      fail("a MIG instance whose share is not its compute slices' (MigMilli)");
    }
    if (!resources_.MigFits(g, allocation.mig_profile, allocation.mig_start)) {
      fail("GPU " + std::to_string(g) + ": no room for its MIG instance at memory slice " +
           std::to_string(allocation.mig_start) + " (not in MIG mode, busy, overlapping or not " +
           "a documented start)");
    }
    if (cluster_.node(cluster_.NodeOfGpu(g)).gpu_type != allocation.gpu_type ||
        !live.request.AllowsType(allocation.gpu_type)) {
      fail("a GPU type it may not use");
    }
    if (!own_gpus_allowed &&
        !resources_.HostFitsGpus(live.request.host, allocation.gpus, allocation.milli)) {
      fail("the free CPUs or host memory of its nodes cannot take it");
    }
    return;
  }
  if (allocation.milli < 0 || allocation.milli >= 1000) fail("a share outside 1..999");
  if (allocation.batch < 0 || (allocation.batch > 0 && !elastic_)) {
    fail("a batch chosen by a policy that is not elastic");
  }
  if (allocation.gpu_type < 0 || !live.request.AllowsType(allocation.gpu_type)) {
    fail("a GPU type it may not use");
  }
  for (size_t i = 0; i < allocation.gpus.size(); ++i) {
    const int g = allocation.gpus[i];
    if (g < 0 || g >= cluster_.total_gpus()) fail("no GPU " + std::to_string(g));
    if (i > 0 && g <= allocation.gpus[i - 1]) fail("GPUs not ascending and unique");
    if (cluster_.node(cluster_.NodeOfGpu(g)).gpu_type != allocation.gpu_type) {
      fail("GPU " + std::to_string(g) + " is not of the allocation's type");
    }
    if (allocation.milli > 0) {
      if (resources_.free_milli(g) < allocation.milli) {
        fail("GPU " + std::to_string(g) + " has less than a share of " +
             std::to_string(allocation.milli) + " thousandths free");
      }
    } else if (!resources_.IsGpuFree(g)) {
      const bool own = own_gpus_allowed && std::binary_search(live.allocation.gpus.begin(),
                                                              live.allocation.gpus.end(), g);
      if (!own) fail("GPU " + std::to_string(g) + " is busy");
    }
  }
  if (live.request.constraint != 0) {
    if (std::string why = constraints_->Check(cluster_, live.request, allocation.gpus);
        !why.empty()) {
      fail("against its placement constraints: " + why);
    }
    // Anti-affinity (docs/spreading.md): no other job of its group in a domain it takes (a job
    // resizing counts in its own domains already).
    const SpreadRule& rule = constraints_->spread(live.request.constraint);
    if (!rule.empty()) {
      std::vector<int> own;
      if (own_gpus_allowed) {
        ForEachNode(cluster_, live.allocation.gpus, [&](int node, int) {
          own.push_back(resources_.SpreadDomainOf(rule.domain, node));
        });
      }
      ForEachNode(cluster_, allocation.gpus, [&](int node, int) {
        const int domain = resources_.SpreadDomainOf(rule.domain, node);
        const int mine = std::find(own.begin(), own.end(), domain) != own.end() ? 1 : 0;
        if (resources_.spread_count(rule.group, domain) > mine) {
          fail("against its spread rule: node " + std::to_string(node) + " is in a " +
               SpreadDomainName(rule.domain) + " where another job of group " +
               constraints_->group_name(rule.group) + " runs");
        }
      });
    }
  }
  // A resize is checked against the host resources once the job has let go of its own (Start).
  if (!own_gpus_allowed &&
      !resources_.HostFitsGpus(live.request.host, allocation.gpus, allocation.milli)) {
    fail("the free CPUs or host memory of its nodes cannot take it");
  }
}

void Engine::Start(JobId id, Allocation allocation) {
  if (id < 0 || id >= static_cast<JobId>(runs_.size())) PolicyBug("start of a nonexistent job");
  JobRun& run = runs_[id];
  ActiveRun& live = Live(id);
  if (run.state != JobState::kQueued) {
    PolicyBug("start of job " + trace_.jobs[id].id + " in state " + JobStateName(run.state));
  }
  const int size = static_cast<int>(allocation.gpus.size());
  if (live.request.whole_nodes) {
    ValidateWholeNodes(id, allocation);
  } else if (elastic_ ? size > live.request.gpus : size != live.request.gpus) {
    PolicyBug("start of job " + trace_.jobs[id].id + " on " + std::to_string(size) +
              " GPUs; it requests " + std::to_string(live.request.gpus));
  }
  ValidateAllocation(id, allocation, "start of", false);
  // Backfilling plans CPUs and host memory per node as they plan GPUs (docs/backfilling.md), so
  // promises hold under host limits too. A site's limits may hold a promised job back: its
  // promise is an estimate then; so may a scheduler cycle (the start waits for the cycle's next
  // pass) and a spread group (the plan counts GPUs per node, not which group's jobs will hold a
  // node then; docs/spreading.md).
  if (options_.check_invariants && plans_held_ && !promised_start_.empty() &&
      policy_.KeepsPromises() &&
      !(site_ && (site_->has_start_rules() || site_->scheduler_cycle_seconds() > 0)) &&
      (live.request.constraint == 0 || constraints_->spread(live.request.constraint).empty())) {
    const double promised = promised_start_[id];
    if (now_ > promised + 1e-9 * std::max(1.0, std::abs(promised))) {
      PolicyBug("job " + trace_.jobs[id].id + " starts after the start it was promised (" +
                std::to_string(promised) + ") although every job ran within its plan");
    }
  }
  const bool modelled = !model_runs_.empty();
  int batch = allocation.batch > 0 ? allocation.batch : (modelled ? model_runs_[id].batch : 0);
  if (modelled && allocation.batch == 0 && allocation.milli == 0 &&
      options_.models->options().batch_choice ==
          ModelRuntimeOptions::BatchChoice::kGoodputOptimal &&
      options_.models->model(id) != nullptr) {
    // Batch tuning without scheduling: the goodput-optimal batch for this allocation (it fits).
    const int best = options_.models->BestBatch(id, allocation.gpu_type, size);
    if (best > 0) batch = best;
  }
  bool oom = false;
  Allocation working_scratch;
  if (!gpu_memory_.empty()) {
    model_runs_[id].memory_per_gpu =
        JobMemory(id, Working(id, allocation, &working_scratch), batch, &oom);
    if (oom && elastic_) {
      PolicyBug("start of job " + trace_.jobs[id].id + " at batch " + std::to_string(batch) +
                " on " + std::to_string(size) + " GPUs of type " +
                cluster_.catalog().gpu(allocation.gpu_type).name + " runs out of memory");
    }
  }
  if (site_ && site_->has_start_rules() &&
      !site_->MayStart(id, now_, SitePlan(id), live.request.gpus)) {
    PolicyBug("start of job " + trace_.jobs[id].id + ", which the site's rules hold back: " +
              site_->WhyBlocked(id, now_, SitePlan(id), live.request.gpus));
  }
  QueueRemove(id);
  ++state_version_;
  if (site_) site_->OnStart(id, live.request.gpus);
  if (!allocation.gpus.empty()) allocation.node = -1;  // the field of CPU-only jobs only
  resources_.AllocateJob(live.request.host, allocation.gpus, allocation.milli, allocation.node,
                         live.request.constraint, allocation.mig_profile, allocation.mig_start);
  const int nodes = metrics_.OnAllocate(allocation, live.request.host);
  live.allocation = std::move(allocation);
  live.allocation.batch = 0;
  run.gpu_type = static_cast<int16_t>(live.allocation.gpu_type);
  if (!holder_.empty() && live.allocation.milli == 0) {
    for (int g : live.allocation.gpus) holder_[g] = id;
  }
  run.state = JobState::kRunning;
  ++starts_;
  if (run.first_start < 0) {
    run.first_start = now_;
    ++jobs_started_;
  }
  live.last_start = now_;
  if (shared_memory_ && live.request.milli > 0 && live.allocation.milli > 0 &&
      live.allocation.mig_profile < 0) {
    // Its peaks follow from this start; the overflows at this time were checked before the pass.
    shared_memory_->Add(live.allocation.gpus[0], id, trace_.jobs[id].gpu_milli, now_);
    ScheduleOverflow(live.allocation.gpus[0], false);
  }
  if (!gpu_memory_.empty()) {
    ModelRun& mrun = model_runs_[id];
    mrun.batch = batch;
    PlaceMemory(id, +1);
    // The delay the OOM retries caused: until the first start that fits (later restarts after
    // preemptions or failures do not count).
    if (mrun.oom_failures > 0 && !oom && mrun.oom_delay == 0)
      mrun.oom_delay = now_ - run.first_start;
    oom_pending_[id] = oom;
  }
  // An OOM start makes no progress (StopRunning ignores its rate), but keeps the rate it would
  // have, so that policies estimating its end (backfilling reservations, srtf) see a finite one.
  const Allocation& working = Working(id, live.allocation, &working_scratch);
  live.rate = RateOf(id, working, batch);
  if (oom && !(live.rate > 0)) live.rate = runtime_.Rate(trace_.jobs[id], working);
  CHECK(live.rate > 0, "runtime model returned a non-positive rate");
  run.max_gpus = std::max(run.max_gpus, static_cast<int>(live.allocation.gpus.size()));
  run.max_nodes = std::max(run.max_nodes, nodes);
  RunningAdd(id);
  if (failure_log_.has_jobs()) ResumeAfterInterruption(id);
  if (!plans_.empty()) PlanJobCheckpoints(id);
  ScheduleFinish(id);
}

void Engine::ResumeAfterInterruption(JobId id) {
  JobReliability* rel = failure_log_.find(id);
  if (rel == nullptr || rel->interrupted_at < 0) return;
  ActiveRun& live = Live(id);
  // The detection (and a spare's swap) went on while the job waited: what is left of it.
  const double waited = now_ - rel->interrupted_at;
  live.overhead_left += std::max(0.0, rel->pending_detection - waited);
  const double wait_gpu_seconds = waited * HeldGpus(live.allocation);
  rel->wait_gpu_seconds += wait_gpu_seconds;
  failure_log_.totals(rel->wait_cause).wait_gpu_seconds += wait_gpu_seconds;
  rel->overhead_cause = rel->wait_cause;
  rel->cause_overhead_left = live.overhead_left;  // all the interruption's (FailJob set it)
  rel->interrupted_at = -1;
  rel->pending_detection = 0;
}

void Engine::ChargeRestartOverhead(JobId id, double seconds, double gpus) {
  JobReliability* rel = failure_log_.find(id);
  if (rel == nullptr || rel->overhead_cause < 0) return;
  // Paid in order: the interruption's restart, then a preemption's cost added since (Preempt,
  // Move), which is counted as preemption, not restart, overhead.
  const double charged = std::min(seconds, rel->cause_overhead_left);
  rel->cause_overhead_left -= charged;
  rel->restart_gpu_seconds += charged * gpus;
  failure_log_.totals(rel->overhead_cause).restart_gpu_seconds += charged * gpus;
  // The cause's seconds are part of overhead_left (paid alike, only a preemption adds to it).
  if (!(rel->cause_overhead_left > 0)) rel->overhead_cause = -1;
}

void Engine::DrainIntoPool(const std::vector<int>& gpus) {
  int last_node = -1;
  for (const int g : gpus) {
    const int node = cluster_.NodeOfGpu(g);
    if (!spares_.InPool(node) || !resources_.IsGpuFree(g)) continue;
    HoldForPool(g);
    if (node != last_node) {
      metrics_.OnNodeChanged(node);
      // A drained pool node may be usable now; a failed node may be owed it. (ServeOwedSpares
      // frees the spare's GPUs, never these.)
      if (!owed_[cluster_.node(node).group].empty()) ServeOwedSpares(cluster_.node(node).group);
    }
    last_node = node;
  }
}

double Engine::StorageSeconds(JobId id, const std::vector<int>& gpus, bool write) const {
  const StorageSpec& storage = cluster_.spec().storage;
  if (!storage.declared() || options_.models == nullptr) return -1;
  const double bytes = options_.models->CheckpointBytes(id);
  if (!(bytes > 0)) return -1;
  double gbps = write ? storage.write_gbps : storage.read_gbps;
  if (storage.node_gbps > 0) {
    int nodes = 0;
    ForEachNode(cluster_, gpus, [&](int, int) { ++nodes; });
    gbps = std::min(gbps, nodes * storage.node_gbps);
  }
  return bytes / (gbps * 1e9);
}

double Engine::JobFailureRate(const std::vector<int>& gpus) const {
  double rate = fleet_ ? fleet_->JobRatePerSecond(gpus) : 0.0;
  const FaultOptions& f = options_.faults;
  ForEachNode(cluster_, gpus, [&](int node, int on_node) {
    const size_t type = static_cast<size_t>(cluster_.node(node).gpu_type);
    if (type < f.node_mtbf_seconds.size() && f.node_mtbf_seconds[type] < FaultOptions::kNever) {
      rate += 1 / f.node_mtbf_seconds[type];
    }
    if (type < f.gpu_mtbf_seconds.size() && f.gpu_mtbf_seconds[type] < FaultOptions::kNever) {
      rate += on_node / f.gpu_mtbf_seconds[type];
    }
  });
  return rate;
}

void Engine::PlanJobCheckpoints(JobId id) {
  const std::vector<int>& gpus = Live(id).allocation.gpus;
  if (gpus.empty()) return;
  const FaultOptions& f = options_.faults;
  const double storage_save = StorageSeconds(id, gpus, true);
  const double save = storage_save >= 0 ? storage_save : SaveSeconds(id);
  const double rate = JobFailureRate(gpus);
  const double mtbf = rate > 0 ? 1 / rate : FaultOptions::kNever;
  plans_[id] = clustersim::PlanCheckpoints(f.checkpoint, f.checkpoint_interval_seconds, save, mtbf);
  const double storage_restore = StorageSeconds(id, gpus, false);
  restore_seconds_[id] = storage_restore >= 0 ? storage_restore : ConstantRestoreSeconds(id);
}

double Engine::Ettr(JobId id) const {
  const std::vector<double>& productive = failure_log_.productive_seconds();
  const JobRun& run = runs_[id];
  if (productive.empty() || run.first_start < 0) return std::numeric_limits<double>::quiet_NaN();
  const double end = run.end_time >= 0 ? run.end_time : now_;
  const double elapsed = end - run.first_start;
  return elapsed > 0 ? productive[id] / elapsed : std::numeric_limits<double>::quiet_NaN();
}

void Engine::SetUpReliability() {
  const FaultOptions& f = options_.faults;
  const size_t jobs = trace_.jobs.size();
  // Spot interruptions go through the failure machinery too (cause `spot`): they are reported
  // like failures (ETTR, per-cause rows) even with no failure or checkpoint option.
  if (f.failures() || f.checkpoints() || cluster_.has_spot()) {
    failure_log_.productive_seconds().assign(jobs, 0.0);
    if (f.failure_model != nullptr) {
      for (const FailureCause& cause : f.failure_model->causes()) {
        failure_log_.AddCause({cause.name, cause.component, FailureDomainName(cause.domain)});
      }
      fleet_.emplace(*f.failure_model, cluster_, f.seed ^ 0x5EED0F1EE7ull);
    }
    auto any = [](const std::vector<double>& v) {
      return std::any_of(v.begin(), v.end(), [](double x) { return x < FaultOptions::kNever; });
    };
    if (any(f.node_mtbf_seconds)) {
      node_cause_ = failure_log_.AddCause({"node", "node (--node-mtbf)", "node"});
    }
    if (any(f.gpu_mtbf_seconds)) {
      gpu_cause_ = failure_log_.AddCause({"gpu", "GPU (--gpu-mtbf)", "gpu"});
    }
    auto any_row = [&](bool gpu) {
      return std::any_of(f.trace.begin(), f.trace.end(),
                         [gpu](const FailureRecord& r) { return (r.gpu >= 0) == gpu; });
    };
    if (any_row(false)) {
      trace_cause_ = failure_log_.AddCause({"trace", "failure trace: a node", "node"});
    }
    if (any_row(true)) {
      trace_gpu_cause_ = failure_log_.AddCause({"trace-gpu", "failure trace: one GPU", "gpu"});
    }
    const bool storage = cluster_.spec().storage.declared() && options_.models != nullptr;
    if (f.checkpoint.rule != CheckpointRule::kFixed || f.checkpoint.async || storage) {
      plans_.assign(jobs, CheckpointPlan{f.checkpoint_interval_seconds,
                                         f.checkpoint_cost_seconds, 0.0});
      restore_seconds_.assign(jobs, f.restore_cost_seconds);
    }
  }
  if (cluster_.spare_nodes() > 0) {
    spares_ = SparePool(cluster_);
    owed_.resize(cluster_.spec().groups.size());
    for (const Node& node : cluster_.nodes()) {
      if (!node.spare) continue;
      for (int g = node.first_gpu; g < node.first_gpu + node.gpu_count; ++g) {
        const int one[] = {g};
        empty_resources_.Allocate(one);  // never placeable: a job larger than the rest is rejected
        HoldForPool(g);
      }
      metrics_.OnNodeChanged(node.index);
    }
  }
}

void Engine::Preempt(JobId id) {
  if (id < 0 || id >= static_cast<JobId>(runs_.size()) || runs_[id].state != JobState::kRunning) {
    PolicyBug("preemption of a job that is not running");
  }
  JobRun& run = runs_[id];
  ActiveRun& live = Live(id);
  costs_[id].preemption_gpu_seconds += HeldGpus(live.allocation) * PreemptionSeconds(id);
  StopRunning(id, IntervalEnd::kPreempt);
  live.allocation.gpus.clear();
  live.allocation.node = -1;
  run.state = JobState::kQueued;
  ++run.preemptions;
  live.overhead_left += PreemptionSeconds(id);
  QueueInsertSorted(id);
}

void Engine::Resize(JobId id, Allocation allocation) {
  if (id < 0 || id >= static_cast<JobId>(runs_.size()) || runs_[id].state != JobState::kRunning) {
    PolicyBug("resize of a job that is not running");
  }
  ValidateAllocation(id, allocation, "resize of", true);
  ActiveRun& live = Live(id);
  if (allocation.milli > 0 || live.allocation.milli > 0) PolicyBug("resize of a GPU share");
  if (live.request.whole_nodes) PolicyBug("resize of a job that holds whole nodes");
  Move(id, std::move(allocation), IntervalEnd::kResize);
}

void Engine::Migrate(JobId id, Allocation allocation) {
  if (id < 0 || id >= static_cast<JobId>(runs_.size()) || runs_[id].state != JobState::kRunning) {
    PolicyBug("migration of a job that is not running");
  }
  const ActiveRun& live = Live(id);
  if (allocation.milli > 0 || live.allocation.milli > 0 || live.allocation.mig_profile >= 0 ||
      allocation.mig_profile >= 0) {
    PolicyBug("migration of a GPU share or MIG instance");
  }
  if (live.request.whole_nodes) PolicyBug("migration of a job that holds whole nodes");
  if (allocation.gpus.size() != live.allocation.gpus.size()) {
    PolicyBug("migration to another number of GPUs");
  }
  ValidateAllocation(id, allocation, "migration of", true);
  JobCosts& costs = costs_[id];
  ++costs.migrations;
  costs.migration_gpu_seconds += HeldGpus(allocation) * PreemptionSeconds(id);
  Move(id, std::move(allocation), IntervalEnd::kMigrate);
}

void Engine::Move(JobId id, Allocation allocation, IntervalEnd why) {
  JobRun& run = runs_[id];
  ActiveRun& live = Live(id);
  // Checkpoint on the old GPUs, restore on the new: the job pays the cost on its new GPUs.
  costs_[id].preemption_gpu_seconds += HeldGpus(allocation) * PreemptionSeconds(id);
  StopRunning(id, why);
  run.state = JobState::kQueued;  // transiently, so Start's bookkeeping applies
  QueueInsertSorted(id);
  // An elastic policy starts jobs on up to their request, which stays; others resize it.
  if (!elastic_) live.request.gpus = static_cast<int>(allocation.gpus.size());
  live.overhead_left += PreemptionSeconds(id);  // checkpoint, restore on the new GPUs
  Start(id, std::move(allocation));
}

double Engine::SaveSeconds(JobId id) const {
  const double modelled = options_.models ? options_.models->CheckpointSeconds(id) : 0.0;
  return modelled > 0 ? modelled : options_.faults.checkpoint_cost_seconds;
}

double Engine::RestoreSeconds(JobId id) const {
  return restore_seconds_.empty() ? ConstantRestoreSeconds(id) : restore_seconds_[id];
}

double Engine::ConstantRestoreSeconds(JobId id) const {
  const double modelled = options_.models ? options_.models->CheckpointSeconds(id) : 0.0;
  return modelled > 0 ? modelled : options_.faults.restore_cost_seconds;
}

double Engine::PreemptionSeconds(JobId id) const {
  const double modelled = options_.models ? options_.models->CheckpointSeconds(id) : 0.0;
  return modelled > 0 ? 2 * modelled : options_.preemption_cost_seconds;
}

double Engine::TypeRate(JobId id, int type) const {
  const ActiveRun& live = Live(id);
  if (type < 0 || !live.request.AllowsType(type) || cluster_.GpusOfType(type) == 0) return 0;
  const int batch = model_runs_.empty() ? 0 : model_runs_[id].batch;
  const Job& job = trace_.jobs[id];
  const PlacementRequest one = OnType(live.request, type);
  // The answer is the run's placement (with its rules for whole nodes, placement constraints,
  // tensor-parallel groups and MIG instances, as a start would be placed) on the empty cluster,
  // which the request's shape decides, and what RateOf reads of the job.
  const ModelRuntime* models = options_.models;
  const auto key = std::make_tuple(ShapeOf(one), job.model.id(), job.gpu_milli, job.gpus,
                                   models ? models->model_entry(id) : -1,
                                   models ? models->user_batch(id) : 0, batch);
  auto it = type_rate_cache_.find(key);
  if (it != type_rate_cache_.end()) return it->second;
  Allocation allocation;
  double rate = 0;
  if (one.gpus > 0 && active_placement_->Find(empty_resources_, one, &allocation)) {
    allocation.milli = one.milli;
    rate = RateOf(id, allocation, batch);
  }
  type_rate_cache_.emplace(key, rate);
  return rate;
}

double Engine::gpu_memory_used(int gpu) const {
  return gpu_memory_.empty() ? 0.0 : gpu_memory_[gpu];
}

void Engine::SetBorrowing(JobId id, bool borrowing) {
  if (id < 0 || id >= static_cast<JobId>(runs_.size()) || runs_[id].state != JobState::kRunning) {
    PolicyBug("borrowing mark on a job that is not running");
  }
  JobRun& run = runs_[id];
  if (run.borrowing == borrowing) return;
  AccrueBorrowed(id);
  run.borrowing = borrowing;
  if (borrowing) costs_[id].borrowing_since = now_;
}

void Engine::AccrueBorrowed(JobId id) {
  JobRun& run = runs_[id];
  ActiveRun& live = Live(id);
  if (!run.borrowing) return;
  JobCosts& costs = costs_[id];
  costs.borrowed_gpu_seconds += (now_ - costs.borrowing_since) * HeldGpus(live.allocation);
  run.borrowing = false;
}

const Allocation& Engine::Working(JobId id, const Allocation& allocation,
                                  Allocation* scratch) const {
  const int gpus = Live(id).request.gpus;
  if (!Live(id).request.whole_nodes || static_cast<int>(allocation.gpus.size()) <= gpus) {
    return allocation;
  }
  scratch->gpu_type = allocation.gpu_type;
  scratch->milli = 0;
  scratch->batch = allocation.batch;
  scratch->gpus.assign(allocation.gpus.begin(), allocation.gpus.begin() + gpus);
  return *scratch;
}

void Engine::ValidateWholeNodes(JobId id, const Allocation& allocation) const {
  const ActiveRun& live = Live(id);
  auto fail = [&](const std::string& what) {
    PolicyBug("start of job " + trace_.jobs[id].id + " (whole nodes): " + what);
  };
  if (allocation.milli > 0) fail("a GPU share");
  const int size = static_cast<int>(allocation.gpus.size());
  if (size < live.request.gpus) {
    fail(std::to_string(size) + " GPUs; it requests " + std::to_string(live.request.gpus));
  }
  // Every node touched is held entirely, and no node beyond those the request needs.
  int nodes = 0;
  int per_node = 0;
  for (size_t i = 0; i < allocation.gpus.size();) {
    const int g = allocation.gpus[i];
    if (g < 0 || g >= cluster_.total_gpus()) fail("no GPU " + std::to_string(g));
    const Node& node = cluster_.node(cluster_.NodeOfGpu(g));
    const size_t end = i + static_cast<size_t>(node.gpu_count);
    if (g != node.first_gpu || end > allocation.gpus.size() ||
        allocation.gpus[end - 1] != node.first_gpu + node.gpu_count - 1) {
      fail("node " + std::to_string(node.index) + " is not held whole");
    }
    per_node = node.gpu_count;
    ++nodes;
    i = end;
  }
  if (per_node > 0 && (nodes - 1) * per_node >= live.request.gpus) {
    fail(std::to_string(nodes) + " nodes; " + std::to_string(live.request.gpus) +
         " GPUs need fewer");
  }
}

void Engine::Promise(JobId id, double start_seconds) {
  if (id < 0 || id >= static_cast<JobId>(runs_.size())) PolicyBug("promise to a nonexistent job");
  if (runs_[id].state != JobState::kQueued) {
    PolicyBug("promise to job " + trace_.jobs[id].id + " in state " +
              JobStateName(runs_[id].state));
  }
  if (!(start_seconds >= now_)) PolicyBug("promise in the past to job " + trace_.jobs[id].id);
  if (promised_start_.empty()) {
    promised_start_.assign(runs_.size(), std::numeric_limits<double>::quiet_NaN());
  }
  if (std::isnan(promised_start_[id])) promised_start_[id] = start_seconds;
}

void Engine::Decline(JobId id, std::string reason) {
  if (id < 0 || id >= static_cast<JobId>(runs_.size()) || runs_[id].state != JobState::kQueued) {
    PolicyBug("decline of a job that is not queued");
  }
  if (reason.empty()) PolicyBug("decline of job " + trace_.jobs[id].id + " without a reason");
  QueueRemove(id);
  Reject(id, std::move(reason));
}

void Engine::SetTimer(double time, JobId id, int tag) {
  if (!(time >= now_)) PolicyBug("timer set in the past");
  if (id < kNoJob || id >= static_cast<JobId>(runs_.size())) PolicyBug("timer for no job");
  if (tag < 0) PolicyBug("timer with a negative tag");
  Push(time, kTimerRank, id, static_cast<uint32_t>(tag));
}

bool Engine::MayStart(JobId id) const {
  return !site_ || !site_->has_start_rules() ||
         site_->MayStart(id, now_, SitePlan(id), Live(id).request.gpus);
}

bool Engine::DeferToCycle(bool finished, bool arrived) {
  const double cycle = site_->scheduler_cycle_seconds();
  if (!(cycle > 0)) return false;
  if ((finished && site_->schedule_on_end()) || (arrived && site_->schedule_on_submit())) {
    return false;
  }
  const double next = std::ceil(now_ / cycle) * cycle;
  if (!(next > now_)) return false;
  if (!(cycle_wake_ > now_ && cycle_wake_ <= next)) {
    Push(next, kTimerRank, kSiteWakeJob, 0);
    cycle_wake_ = next;
  }
  return true;
}

double Engine::SitePlan(JobId id) const {
  return site_->Plan(id, policy_.RequestedWalltime(trace_.jobs[id]));
}

void Engine::ScheduleSiteWake() {
  // Passes happen at events; a job held back by a time rule also needs one when the rule
  // changes, as long as some job waits.
  if (!site_->has_time_rules() || queue_length_ == 0) return;
  const double t = site_->NextChange(now_);
  if (!std::isfinite(t) || (site_wake_ > now_ && site_wake_ <= t)) return;
  if (const double cycle = site_->scheduler_cycle_seconds(); cycle > 0) {
    // Passes happen at cycles only: the first cycle at or after the change.
    const double at = std::ceil(t / cycle) * cycle;
    if (cycle_wake_ > now_ && cycle_wake_ <= at) return;
  }
  Push(t, kTimerRank, kSiteWakeJob, 0);
  site_wake_ = t;
}

void Engine::QueueAppend(JobId id) {
  ActiveRun& live = Live(id);
  live.queued_since = now_;
  if (options_.wait_reasons) wait_.Enter(id, policy_.WaitGroup(*this, id), now_);
  live.queue_prev = queue_tail_;
  live.queue_next = kNoJob;
  if (queue_tail_ == kNoJob) {
    queue_head_ = id;
  } else {
    Live(queue_tail_).queue_next = id;
  }
  queue_tail_ = id;
  if (queued_indexed_) queued_ids_.Insert(id);
  ++queue_length_;
}

void Engine::QueueInsertSorted(JobId id) {
  // The queue is in JobId order: the job goes after the last queued job of a lower id. A
  // requeued job usually lands near the tail; when it does not (a policy that preempts many old
  // jobs at once beside a long queue), the walk is replaced for the rest of the run by an ordered
  // index of the queued ids (built once, then kept by every queue change).
  constexpr int kWalk = 64;
  JobId after = queue_tail_;
  int steps = 0;
  while (!queued_indexed_ && after != kNoJob && after > id && steps < kWalk) {
    after = Live(after).queue_prev;
    ++steps;
  }
  if (queued_indexed_ || (after != kNoJob && after > id)) {
    if (!queued_indexed_) {
      queued_ids_ = IndexSet(static_cast<int>(runs_.size()));
      for (JobId q = queue_head_; q != kNoJob; q = Live(q).queue_next) queued_ids_.Insert(q);
      queued_indexed_ = true;
    }
    const int next = queued_ids_.FindFrom(id + 1);
    after = next < 0 ? queue_tail_ : Live(next).queue_prev;
    queued_ids_.Insert(id);
  }
  ActiveRun& live = Live(id);
  live.queued_since = now_;
  if (options_.wait_reasons) wait_.Enter(id, policy_.WaitGroup(*this, id), now_);
  live.queue_prev = after;
  live.queue_next = after == kNoJob ? queue_head_ : Live(after).queue_next;
  if (after == kNoJob) {
    queue_head_ = id;
  } else {
    Live(after).queue_next = id;
  }
  if (live.queue_next == kNoJob) {
    queue_tail_ = id;
  } else {
    Live(live.queue_next).queue_prev = id;
  }
  ++queue_length_;
}

void Engine::QueueRemove(JobId id) {
  JobRun& run = runs_[id];
  ActiveRun& live = Live(id);
  if (live.queue_prev == kNoJob) {
    queue_head_ = live.queue_next;
  } else {
    Live(live.queue_prev).queue_next = live.queue_next;
  }
  if (live.queue_next == kNoJob) {
    queue_tail_ = live.queue_prev;
  } else {
    Live(live.queue_next).queue_prev = live.queue_prev;
  }
  live.queue_prev = live.queue_next = kNoJob;
  if (queued_indexed_) queued_ids_.Erase(id);
  if (options_.wait_reasons) wait_.Leave(id, live.queued_since, now_);
  run.queued_seconds += now_ - live.queued_since;
  --queue_length_;
}

void Engine::SetWaitReason(JobId id, WaitReason reason) {
  if (id < 0 || id >= static_cast<JobId>(runs_.size()) || runs_[id].state != JobState::kQueued) {
    PolicyBug("wait reason for a job that is not queued");
  }
  if (options_.wait_reasons) wait_.SetOwn(id, reason, false, Live(id).queued_since, now_);
}

void Engine::ClearWaitReason(JobId id) {
  if (id < 0 || id >= static_cast<JobId>(runs_.size()) || runs_[id].state != JobState::kQueued) {
    PolicyBug("wait reason cleared for a job that is not queued");
  }
  if (!options_.wait_reasons) return;
  wait_.ClearOwn(id, Live(id).queued_since, now_);
  if (id == derived_head_) derived_head_ = kNoJob;  // derive again after the pass
}

void Engine::SetGroupWaitReason(int group, WaitReason reason) {
  if (group < 0) PolicyBug("wait group negative");
  if (options_.wait_reasons) wait_.SetGroup(group, reason, now_);
}

void Engine::DeriveHeadWaitReason() {
  if (!options_.wait_reasons) return;
  const JobId head = queue_head_;
  if (derived_head_ != kNoJob && derived_head_ != head) {
    // The job it was derived for is no longer first: its group's reason holds again.
    const JobRun& old = runs_[derived_head_];
    if (old.state == JobState::kQueued && wait_.own_is_derived(derived_head_)) {
      wait_.ClearOwn(derived_head_, Live(derived_head_).queued_since, now_);
    }
    derived_head_ = kNoJob;
  }
  if (head == kNoJob) return;
  if (wait_.has_own(head) && !wait_.own_is_derived(head)) return;  // the policy stated it
  if (head == derived_head_ && state_version_ == derived_version_) return;
  derived_head_ = head;
  derived_version_ = state_version_;
  const double since = Live(head).queued_since;
  if (const std::optional<WaitReason> why = NoFitReason(head)) {
    wait_.SetOwn(head, *why, true, since, now_);
  } else {
    wait_.ClearOwn(head, since, now_);  // it fits: the policy holds it, as its group
  }
}

void Engine::RunningAdd(JobId id) {
  Live(id).running_slot = static_cast<int>(running_.size());
  running_.push_back(id);
}

void Engine::RunningRemove(JobId id) {
  const int slot = Live(id).running_slot;
  const JobId last = running_.back();
  running_[slot] = last;
  Live(last).running_slot = slot;
  running_.pop_back();
  Live(id).running_slot = -1;
}

void Engine::CheckInvariants() const {
  // The queue: a doubly linked list in ascending JobId order, of queue_length_ queued jobs, and
  // (once built) the ordered index of QueueInsertSorted holding exactly them.
  {
    int length = 0;
    JobId previous = kNoJob;
    for (JobId id = queue_head_; id != kNoJob; id = Live(id).queue_next) {
      CHECK(runs_[id].state == JobState::kQueued && Live(id).queue_prev == previous &&
                (previous == kNoJob || previous < id) &&
                (!queued_indexed_ || queued_ids_.Contains(id)),
            "invariant: the queue is a list of queued jobs in JobId order");
      previous = id;
      ++length;
    }
    CHECK(previous == queue_tail_ && length == queue_length_ &&
              (!queued_indexed_ || queued_ids_.count() == length),
          "invariant: the queue's tail, length and index agree with its list");
  }
  // No GPU over-committed: whole allocations are disjoint, shares of a GPU add up to at most
  // all of it, every held GPU is busy, and busy + free + failed GPUs make the cluster.
  std::vector<int> held(cluster_.total_gpus(), 0);  // thousandths held, 1000 = whole
  std::vector<char> whole_held(cluster_.total_gpus(), 0);
  int whole = 0;
  double busy_fraction = 0;
  double running_gpu_seconds = 0;
  std::vector<const Allocation*> mig_instances;  // MIG (docs/mig.md): checked apart below
  for (JobId id : running_) {
    const JobRun& run = runs_[id];
    const ActiveRun& live = Live(id);
    CHECK(run.state == JobState::kRunning, "running list holds a job not running");
    const int milli = live.allocation.milli;
    if (live.allocation.mig_profile >= 0) {
      mig_instances.push_back(&live.allocation);
      busy_fraction += HeldGpus(live.allocation);
      running_gpu_seconds += (now_ - live.last_start) * HeldGpus(live.allocation);
      continue;
    }
    for (int g : live.allocation.gpus) {
      CHECK(!whole_held[g] && (milli > 0 ? held[g] + milli <= 1000 : held[g] == 0),
            "GPU " + std::to_string(g) + " held by two jobs");
      CHECK(!resources_.IsGpuFree(g), "GPU " + std::to_string(g) + " held but marked free");
      if (milli == 0) {
        CHECK(holder_.empty() || holder_[g] == id,
              "GPU " + std::to_string(g) + " holder out of step");
        ++whole;
        whole_held[g] = 1;
      }
      held[g] += milli > 0 ? milli : 1000;
    }
    busy_fraction += HeldGpus(live.allocation);
    running_gpu_seconds += (now_ - live.last_start) * HeldGpus(live.allocation);
    // Placement constraints (sim/engine/placement_constraints.h) hold while the job runs.
    if (live.request.constraint != 0) {
      const std::string why = constraints_->Check(cluster_, live.request, live.allocation.gpus);
      CHECK(why.empty(), "job " + trace_.jobs[id].id + " runs against its placement constraints: " +
                             why);
      const SpreadRule& rule = constraints_->spread(live.request.constraint);
      if (!rule.empty()) {
        ForEachNode(cluster_, live.allocation.gpus, [&](int node, int) {
          CHECK(resources_.spread_count(rule.group, resources_.SpreadDomainOf(rule.domain, node)) ==
                    1,
                "job " + trace_.jobs[id].id + " shares its " + SpreadDomainName(rule.domain) +
                    " (node " + std::to_string(node) + ") with another job of group " +
                    constraints_->group_name(rule.group));
        });
      }
    }
  }
  // MIG layouts: no two instances overlap, each at a documented start of its profile, on a GPU
  // in MIG mode that nothing else holds; the free state's slices are the instances'.
  if (const std::string why = CheckMigLayouts(cluster_, mig_instances); !why.empty()) {
    CHECK(false, "MIG layout: " + why);
  }
  int busy = 0;
  if (resources_.any_mig() || !mig_instances.empty()) {
    std::vector<uint8_t> slices(cluster_.total_gpus(), 0);
    for (const Allocation* a : mig_instances) {
      const int g = a->gpus[0];
      CHECK(held[g] == 0, "GPU " + std::to_string(g) + " holds a MIG instance and another job");
      slices[g] |= GpuMigProfiles(cluster_, g)[a->mig_profile].Mask(a->mig_start);
    }
    for (int g = 0; g < cluster_.total_gpus(); ++g) {
      CHECK(resources_.mig_used(g) == slices[g],
            "GPU " + std::to_string(g) + ": MIG slices out of step with the running instances");
      if (slices[g] == 0) continue;
      CHECK(!resources_.IsGpuFree(g) && resources_.free_milli(g) == 0,
            "GPU " + std::to_string(g) + " holds MIG instances but is free to whole or shares");
      ++busy;
    }
  }
  for (int g = 0; g < cluster_.total_gpus(); ++g) {
    if (held[g] == 0) continue;
    ++busy;
    CHECK(resources_.free_milli(g) == 1000 - held[g],
          "GPU " + std::to_string(g) + " shares out of step with the free state");
  }
  CHECK(busy + resources_.total_free() + down_gpus_ + spares_.held_gpus() + pool_out_gpus_ ==
            cluster_.total_gpus(),
        "busy + free + failed + spare + unprovisioned GPUs != cluster GPUs");
  CHECK(static_cast<int>(failed_gpus_.size()) ==
            down_gpus_ + spares_.held_gpus() + pool_out_gpus_,
        "out-of-service list out of step with the failed, spare and unprovisioned GPUs");
  if (!pools_.empty() || spot_.on) CheckPoolInvariants();
  CHECK(holder_.empty() || std::count_if(holder_.begin(), holder_.end(),
                                         [](JobId h) { return h != kNoJob; }) == whole,
        "a GPU has a holder that no running job accounts for");
  for (size_t g = 0; g < gpu_down_.size(); ++g) {
    CHECK(!gpu_down_[g] || (!held[g] && !resources_.IsGpuFree(static_cast<int>(g))),
          "failed GPU " + std::to_string(g) + " is free or held by a job");
  }
  for (int g = 0; g < (spares_.empty() ? 0 : cluster_.total_gpus()); ++g) {
    if (!spares_.IsHeld(g)) continue;
    CHECK(!held[g] && !resources_.IsGpuFree(g) && (gpu_down_.empty() || gpu_down_[g] == 0) &&
              spares_.InPool(cluster_.NodeOfGpu(g)),
          "spare GPU " + std::to_string(g) + " is free, held by a job, down or off the pool");
  }
  // Host resources: each node's free CPUs and memory are its capacity less the charges of the
  // jobs running on it (docs/resources.md), or none while it is held out of service, never below
  // 0.
  if (resources_.host_limited()) {
    std::vector<int64_t> cpu(cluster_.node_count(), 0);
    std::vector<int64_t> memory(cluster_.node_count(), 0);
    const auto charge = [&](int node, const HostCharge& c) {
      cpu[node] += c.cpu_milli;
      memory[node] += c.memory_mib;
    };
    for (JobId id : running_) {
      const ActiveRun& live = Live(id);
      const Allocation& a = live.allocation;
      if (a.node >= 0) {
        charge(a.node, HostChargeOn(cluster_.node(a.node), live.request.host, 0, 0, 0));
      }
      const int n = static_cast<int>(a.gpus.size());
      ForEachNode(cluster_, a.gpus, [&](int node, int on_node) {
        charge(node, JobHostChargeOn(cluster_.node(node), live.request.host, on_node, n, a.milli));
      });
    }
    for (int node = 0; node < cluster_.node_count(); ++node) {
      const Node& info = cluster_.node(node);
      if (!held_out_.empty() && held_out_[node]) {
        CHECK(cpu[node] == 0 && memory[node] == 0 && resources_.free_cpu_milli(node) == 0 &&
                  resources_.free_memory_mib(node) == 0,
              "node " + std::to_string(node) + " is out of service but holds CPUs or memory");
        continue;
      }
      CHECK(resources_.free_cpu_milli(node) == NodeCpuMilli(info) - cpu[node] &&
                resources_.free_memory_mib(node) == NodeMemoryMib(info) - memory[node] &&
                resources_.free_cpu_milli(node) >= 0 && resources_.free_memory_mib(node) >= 0,
            "node " + std::to_string(node) + ": free CPUs or memory out of step with the " +
                "running jobs' charges");
    }
  }
  // Job kinds, when counted (for gpu-clustering): each node's counts are those of the running
  // jobs with GPUs on it.
  if (placement_.CountsJobKinds()) {
    std::vector<std::map<int, int>> kinds(cluster_.node_count());
    for (JobId id : running_) {
      const Allocation& a = Live(id).allocation;
      const int kind = Resources::JobKind(a.gpus.size(), a.milli);
      ForEachNode(cluster_, a.gpus, [&](int node, int) { ++kinds[node][kind]; });
    }
    for (int node = 0; node < cluster_.node_count(); ++node) {
      const auto& counted = resources_.job_kinds(node);
      const std::map<int, int> counts(counted.begin(), counted.end());
      CHECK(counts == kinds[node],
            "node " + std::to_string(node) + ": job kinds out of step with the running jobs");
    }
  }
  // Every job in exactly one state: the queue holds exactly the queued jobs.
  int queued = 0;
  for (JobId id = queue_head_; id != kNoJob; id = Live(id).queue_next) {
    CHECK(runs_[id].state == JobState::kQueued, "queue holds a job not queued");
    ++queued;
  }
  CHECK(queued == queue_length_, "queue length out of step with the queue");
  // The census of every job's state costs O(jobs): on every pass up to 100,000 jobs, on every
  // 64th above, so that --check on a big trace stays within a small factor of the run itself.
  if (runs_.size() <= 100'000 || passes_ % 64 == 0) {
    int states_queued = 0;
    int states_running = 0;
    for (const JobRun& run : runs_) {
      states_queued += run.state == JobState::kQueued;
      states_running += run.state == JobState::kRunning;
    }
    CHECK(states_queued == queued, "a queued job is missing from the queue");
    CHECK(states_running == static_cast<int>(running_.size()),
          "a running job is missing from the running list");
  }
  // The allocation log: one closed interval per start but those still running (its GPU-seconds
  // are checked once, at the end of the run: summing them here would cost O(intervals) a pass).
  if (options_.record_allocations) {
    CHECK(static_cast<int64_t>(allocations_.intervals.size() + running_.size()) == starts_,
          "allocation log out of step with the starts");
  }
  // The metrics' busy GPU-seconds equal the sum over jobs of GPUs x running time.
  const double expected = finished_gpu_seconds_ + running_gpu_seconds;
  const double integrated = metrics_.busy_gpu_seconds();
  CHECK(std::abs(expected - integrated) <= 1e-6 * std::max(1.0, expected),
        "busy GPU-seconds integrated " + std::to_string(integrated) + " != jobs' " +
            std::to_string(expected));
  CHECK(std::abs(metrics_.busy_gpus_now() - busy_fraction) <= 1e-9 * std::max(1.0, busy_fraction),
        "metrics' busy GPUs out of step");
}

}  // namespace clustersim
