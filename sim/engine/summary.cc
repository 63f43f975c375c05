#include "sim/engine/summary.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace clustersim {

double JainIndex(const std::vector<double>& values) {
  double sum = 0;
  double sum_sq = 0;
  for (double v : values) {
    sum += v;
    sum_sq += v * v;
  }
  if (values.empty() || sum_sq == 0) return 1.0;
  return sum * sum / (values.size() * sum_sq);
}

double BoundedSlowdown(double jct_seconds, double run_seconds, double threshold_seconds) {
  return std::max(1.0, jct_seconds / std::max(run_seconds, threshold_seconds));
}

double SummaryValue(const std::vector<SummaryRow>& rows, const std::string& metric) {
  for (const auto& r : rows) {
    if (r.metric == metric && r.scope == "all") return r.value;
  }
  return std::nan("");
}

namespace {

// True for a job that arrived but was still queued or running when the run stopped (--stop-time,
// Ctrl-C): the time distributions count it up to the run's end `end`, a lower bound of what it
// would have taken (right-censored), so that a run is never judged on the jobs that made it
// alone (docs/metrics.md#jobs).
bool Censored(const JobRun& run, const Job& job, double end) {
  return run.state == JobState::kUnfinished && job.submit_time <= end;
}

// The job distributions of a summary (docs/metrics.md#jobs): JCT and first-start wait over every
// job that arrived (an unfinished one up to the run's end `end`), slowdown (JCT over the time the
// job actually ran, its isolated run time on the GPUs it got), queued time (an unfinished job's
// runs to the end: the engine adds it when it stops) and bounded slowdown.
enum Distribution { kJct, kWait, kSlowdown, kQueued, kBsld, kDistributions };

// Calls visit(distribution, value) for each distribution job `id` has a value in.
template <typename Visit>
void DistributionValues(const JobRun& run, const Job& job, double end, double bsld_threshold,
                        const Visit& visit) {
  // Rejected jobs count in none (docs/metrics.md#jobs), a job a policy declined after it had run
  // and been requeued (SchedulingContext::Decline) included: its status is `rejected`.
  if (run.state == JobState::kRejected) return;
  const double submit = job.submit_time;
  const bool ended = Ended(run.state);
  const bool censored = Censored(run, job, end);
  if (ended) {
    visit(kJct, run.end_time - submit);
  } else if (censored) {
    visit(kJct, end - submit);
  }
  if (run.first_start >= 0) {
    visit(kWait, run.first_start - submit);
  } else if (censored) {
    visit(kWait, end - submit);
  }
  if (ended && run.run_seconds > 0) visit(kSlowdown, (run.end_time - submit) / run.run_seconds);
  if (censored || ended) visit(kQueued, run.queued_seconds);
  if (ended) visit(kBsld, BoundedSlowdown(run.end_time - submit, run.run_seconds, bsld_threshold));
}

bool HasDeadlines(const Trace& trace) {
  for (const JobConstraints& c : trace.constraints) {
    if (c.has_deadline()) return true;
  }
  return false;
}

// SLA figures of a set of jobs (docs/deadlines.md#sla-metrics): a job with a deadline meets it
// if it completed by then; every other outcome (late, killed, failed, rejected or declined,
// unfinished) is a violation. Lateness = max(0, end - deadline) of the SLA jobs that ended.
struct SlaTally {
  int64_t jobs = 0;
  int64_t met = 0;
  int64_t rejected = 0;
  std::vector<double> lateness;  // per SLA job that ended, 0 if on time
  std::vector<double> late;      // per late job that ended

  void Add(double deadline, const JobRun& run) {
    if (!std::isfinite(deadline)) return;
    ++jobs;
    rejected += run.state == JobState::kRejected;
    if (Ended(run.state)) {
      const double over = std::max(0.0, run.end_time - deadline);
      lateness.push_back(over);
      if (over > 0) late.push_back(over);
    }
    met += run.state == JobState::kCompleted && run.end_time <= deadline;
  }

  template <typename Add>
  void Emit(const std::string& scope, const Add& add) {
    add("sla_jobs", static_cast<double>(jobs), scope);
    add("sla_met", static_cast<double>(met), scope);
    add("sla_violations", static_cast<double>(jobs - met), scope);
    add("sla_violation_rate", jobs > 0 ? static_cast<double>(jobs - met) / jobs : 0.0, scope);
    add("sla_rejected", static_cast<double>(rejected), scope);
    add("sla_late", static_cast<double>(late.size()), scope);
    if (!lateness.empty()) {
      double sum = 0;
      for (double x : lateness) sum += x;
      add("sla_lateness_seconds_mean", sum / lateness.size(), scope);
      add("sla_lateness_seconds_p95", Percentile(lateness, 0.95), scope);
    }
    if (!late.empty()) {
      double sum = 0;
      for (double x : late) sum += x;
      add("sla_late_lateness_seconds_mean", sum / late.size(), scope);
    }
  }
};

// Per priority level (scope "priority:L") and per virtual cluster (scope "vc:NAME"), when the
// trace has more than one of them: what each group's jobs waited, took and lost to preemption.
template <typename Add>
void AddGroupSummaries(const Engine& engine, double bsld_threshold, const Add& add) {
  struct Group {
    int64_t jobs = 0;
    int64_t preemptions = 0;
    double preemption_gpu_seconds = 0;
    double borrowed_gpu_seconds = 0;
    std::vector<double> wait, queued, jct;
    SlaTally sla;
  };
  const Trace& trace = engine.trace();
  const auto& runs = engine.runs();
  if (trace.jobs.empty()) return;
  const double end = engine.metrics().last_time();
  const bool sla = HasDeadlines(trace);
  // Groups are reported only for a dimension with more than one value: the others are not
  // collected (a map lookup and three appends per job saved on a million jobs).
  const Job& first = trace.jobs.front();
  bool priorities = false;
  bool vcs = false;
  for (const Job& job : trace.jobs) {  // one pass, until both are known to differ
    priorities |= job.priority != first.priority;
    vcs |= !(job.vc == first.vc);
    if (priorities && vcs) break;
  }
  if (!priorities && !vcs) return;
  std::map<int, Group> by_priority;
  std::map<std::string, Group> by_vc;
  std::vector<Group*> groups;
  for (size_t i = 0; i < runs.size(); ++i) {
    const JobRun& run = runs[i];
    const Job& job = trace.jobs[i];
    groups.clear();
    if (priorities) groups.push_back(&by_priority[job.priority]);
    if (vcs) groups.push_back(&by_vc[job.vc.str()]);
    for (Group* group : groups) {
      ++group->jobs;
      group->preemptions += run.preemptions;
      const JobCosts& costs = engine.costs(static_cast<JobId>(i));
      group->preemption_gpu_seconds += costs.preemption_gpu_seconds;
      group->borrowed_gpu_seconds += costs.borrowed_gpu_seconds;
      // Per group: waits, queued times and JCTs (the slowdowns are the run's only).
      DistributionValues(run, job, end, bsld_threshold, [group](Distribution d, double x) {
        if (d == kWait) group->wait.push_back(x);
        if (d == kQueued) group->queued.push_back(x);
        if (d == kJct) group->jct.push_back(x);
      });
      if (sla) group->sla.Add(trace.DeadlineOf(job), run);
    }
  }
  auto emit = [&add](const std::string& scope, Group& group, bool borrowed) {
    add("jobs_total", static_cast<double>(group.jobs), scope);
    for (auto [name, values] :
         {std::pair{"wait_seconds", &group.wait}, std::pair{"queued_seconds", &group.queued},
          std::pair{"jct_seconds", &group.jct}}) {
      if (values->empty()) continue;
      double sum = 0;
      for (double x : *values) sum += x;
      add(std::string(name) + "_mean", sum / values->size(), scope);
      add(std::string(name) + "_p95", Percentile(*values, 0.95), scope);
    }
    add("preemptions", static_cast<double>(group.preemptions), scope);
    add("preemption_gpu_hours", group.preemption_gpu_seconds / 3600, scope);
    if (borrowed) add("borrowed_gpu_hours", group.borrowed_gpu_seconds / 3600, scope);
    if (group.sla.jobs > 0) group.sla.Emit(scope, add);
  };
  if (by_priority.size() > 1) {
    for (auto& [level, group] : by_priority) {
      emit("priority:" + std::to_string(level), group, false);
    }
  }
  if (by_vc.size() > 1) {
    for (auto& [vc, group] : by_vc) emit("vc:" + vc, group, true);
  }
}

// docs/reliability.md#metrics, when failures or checkpoints are on: the cluster's ETTR (the jobs'
// productive GPU-seconds over their GPUs x elapsed seconds, jobs that started), and per cause
// (scope "cause:NAME") and in all: failures, interruptions, spare swaps and the GPU-hours lost to
// recomputation, restart overhead and waiting for capacity.
template <typename Add>
void AddReliabilitySummaries(const Engine& engine, Add& add) {
  const FailureLog& log = engine.failure_log();
  if (log.productive_seconds().empty()) return;
  double productive = 0;
  double elapsed = 0;
  for (JobId id = 0; id < static_cast<JobId>(engine.runs().size()); ++id) {
    const double ettr = engine.Ettr(id);
    if (std::isnan(ettr)) continue;
    const JobRun& run = engine.runs()[id];
    // Weighted by the GPUs it held while running (a share or a MIG instance by its fraction of
    // a GPU), as GPU-hours are.
    const double gpus =
        run.run_seconds > 0 ? run.gpu_seconds / run.run_seconds : engine.trace().jobs[id].gpus;
    const double end = run.end_time >= 0 ? run.end_time : engine.now();
    productive += gpus * log.productive_seconds()[id];
    elapsed += gpus * (end - run.first_start);
  }
  add("ettr", elapsed > 0 ? productive / elapsed : std::numeric_limits<double>::quiet_NaN(),
      "all");
  CauseTotals all;
  for (size_t c = 0; c < log.causes().size(); ++c) {
    const CauseTotals& t = log.totals()[c];
    const std::string scope = "cause:" + log.causes()[c].name;
    add("failures", static_cast<double>(t.failures), scope);
    add("interruptions", static_cast<double>(t.interruptions), scope);
    add("spare_swaps", static_cast<double>(t.swaps), scope);
    add("recompute_gpu_hours", t.recompute_gpu_seconds / 3600, scope);
    add("restart_gpu_hours", t.restart_gpu_seconds / 3600, scope);
    add("capacity_wait_gpu_hours", t.wait_gpu_seconds / 3600, scope);
    all.interruptions += t.interruptions;
    all.swaps += t.swaps;
    all.recompute_gpu_seconds += t.recompute_gpu_seconds;
    all.restart_gpu_seconds += t.restart_gpu_seconds;
    all.wait_gpu_seconds += t.wait_gpu_seconds;
  }
  add("interruptions", static_cast<double>(all.interruptions), "all");
  add("spare_swaps", static_cast<double>(all.swaps), "all");
  add("recompute_gpu_hours", all.recompute_gpu_seconds / 3600, "all");
  add("restart_gpu_hours", all.restart_gpu_seconds / 3600, "all");
  add("capacity_wait_gpu_hours", all.wait_gpu_seconds / 3600, "all");
}

}  // namespace

std::vector<SummaryRow> ComputeSummary(const Engine& engine, const SummaryOptions& options) {
  std::vector<SummaryRow> out;
  auto add = [&](const std::string& metric, double value, const std::string& scope = "all") {
    out.push_back({metric, scope, value});
  };
  const Trace& trace = engine.trace();
  const Cluster& cluster = engine.cluster();
  const Metrics& metrics = engine.metrics();
  const auto& runs = engine.runs();

  int64_t completed = 0, rejected = 0, timeout = 0, unfinished = 0, failed = 0;
  int64_t preemptions = 0;
  // Out-of-memory failures (model-aware runs).
  int64_t started = 0, oom_jobs = 0, oom_failures = 0;
  double oom_gpu_seconds = 0, oom_delay = 0;
  std::vector<double> oom_jct;
  double first_submit = trace.jobs.empty() ? 0 : trace.jobs.front().submit_time;
  double last_end = first_submit;
  const double end = metrics.last_time();  // the simulated clock when the run stopped
  std::map<Symbol, double> user_gpu_seconds;  // jobs naming a user only
  // The five distributions' values (DistributionValues), job by job, are produced twice:
  // counted with the job counts, then again for the percentiles' second pass
  // (TwoPassPercentiles), so that ten million jobs take a few MB here rather than 80 MB per
  // distribution (bench/README.md).
  auto values_of = [&](size_t i, const auto& visit) {
    DistributionValues(runs[i], trace.jobs[i], end, options.bsld_threshold_seconds, visit);
  };
  const std::vector<double> quantiles = {0.50, 0.95, 0.99, 1.0};
  std::vector<TwoPassPercentiles> dists(kDistributions, TwoPassPercentiles(quantiles));
  auto count = [&dists](Distribution d, double x) { dists[d].Count(x); };
  for (size_t i = 0; i < runs.size(); ++i) {
    const JobRun& run = runs[i];
    const Job& job = trace.jobs[i];
    preemptions += run.preemptions;
    // A job a policy declined after it had run (and been requeued) started: its preemptions
    // count above, and it counts among the jobs they are divided by.
    started += run.first_start >= 0;
    if (run.state == JobState::kRejected) {
      ++rejected;
      continue;
    }
    // Fairness is over GPU-seconds: a CPU-only job (0 GPUs) holds none and brings no user in.
    if (!job.user.empty() && job.gpus > 0) user_gpu_seconds[job.user] += run.gpu_seconds;
    const ModelRun& model = engine.model_run(static_cast<JobId>(i));
    oom_failures += model.oom_failures;
    oom_gpu_seconds += model.oom_gpu_seconds;
    if (model.oom_failures > 0) {
      ++oom_jobs;
      oom_delay += model.oom_delay;
      if (run.end_time >= 0) oom_jct.push_back(run.end_time - job.submit_time);
    }
    switch (run.state) {
      case JobState::kCompleted:
        ++completed;
        break;
      case JobState::kTimeout:
        ++timeout;
        break;
      case JobState::kOomFailed:
        ++failed;
        break;
      default:
        ++unfinished;
        break;
    }
    if (Ended(run.state)) last_end = std::max(last_end, run.end_time);
    values_of(i, count);
  }
  bool again = false;
  for (TwoPassPercentiles& d : dists) again |= d.NeedsCollect();
  if (again) {
    auto collect = [&dists](Distribution d, double x) { dists[d].Collect(x); };
    for (size_t i = 0; i < runs.size(); ++i) values_of(i, collect);
  }
  add("jobs_total", static_cast<double>(runs.size()));
  add("jobs_completed", static_cast<double>(completed));
  add("jobs_rejected", static_cast<double>(rejected));
  add("jobs_timeout", static_cast<double>(timeout));
  add("jobs_failed", static_cast<double>(failed));
  add("jobs_unfinished", static_cast<double>(unfinished));
  const char* const names[kDistributions] = {"jct_seconds", "wait_seconds", "slowdown",
                                             "queued_seconds", "bsld"};
  for (int d = 0; d < kDistributions; ++d) {
    TwoPassPercentiles& dist = dists[d];
    if (dist.size() == 0) continue;
    const std::string name = names[d];
    add(name + "_mean", dist.sum() / static_cast<double>(dist.size()));
    // q = 1 is the largest value (rank size - 1).
    const std::vector<double> p = dist.Get();
    add(name + "_p50", p[0]);
    add(name + "_p95", p[1]);
    add(name + "_p99", p[2]);
    add(name + "_max", p[3]);
  }
  add("bsld_threshold_seconds", options.bsld_threshold_seconds);

  const double makespan = last_end - first_submit;
  add("makespan_seconds", makespan);
  add("throughput_jobs_per_hour", makespan > 0 ? completed / (makespan / 3600.0) : 0.0);

  const double span = metrics.last_time() - metrics.start_time();
  add("simulated_seconds", span);
  add("end_seconds", end);
  if (span > 0) {
    add("gpu_utilization", metrics.busy_gpu_seconds() / (cluster.total_gpus() * span));
    for (int type : cluster.gpu_types()) {
      add("gpu_utilization",
          metrics.busy_gpu_seconds_of_type(type) / (cluster.GpusOfType(type) * span),
          cluster.catalog().gpu(type).name);
    }
    add("memory_utilization",
        metrics.memory_used_gib_seconds() / (metrics.total_memory_gib() * span));
    add("queue_length_mean", metrics.queue_length_seconds() / span);
    add("running_jobs_mean", metrics.running_jobs_seconds() / span);
    add("stranded_gpus_mean", metrics.stranded_gpu_seconds() / span);
    add("i_frag_mean", metrics.i_frag_seconds() / span);
    add("node_imbalance_mean", metrics.node_imbalance_seconds() / span);
    add("f_mem", metrics.f_mem_seconds() / span);
    if (metrics.fgd_enabled()) {
      add("fgd_fragmentation", metrics.fgd_fragmentation_seconds() / span);
      add("fgd_fragmented_gpus", metrics.fgd_fragmented_gpu_seconds() / span);
    }
    if (metrics.cpu_capacity_cores() > 0) {
      add("cpu_utilization",
          metrics.cpu_used_core_seconds() / (metrics.cpu_capacity_cores() * span));
    }
    if (metrics.host_memory_capacity_gib() > 0) {
      add("host_memory_utilization",
          metrics.host_memory_used_gib_seconds() / (metrics.host_memory_capacity_gib() * span));
    }
    if (metrics.host_limited()) {
      add("cpu_stranded_gpus_mean", metrics.cpu_stranded_gpu_seconds() / span);
    }
  }
  add("busy_gpu_hours", metrics.busy_gpu_seconds() / 3600.0);
  std::vector<double> shares;
  for (const auto& [user, seconds] : user_gpu_seconds) shares.push_back(seconds);
  // Without users there is nothing to be fair between: no index rather than a perfect 1.
  if (!shares.empty()) add("jain_index_users", JainIndex(shares));
  add("users", static_cast<double>(shares.size()));
  add("energy_kwh", metrics.energy_joules() / 3.6e6);
  double cluster_cost = 0;
  double used_cost = 0;
  for (int type : cluster.gpu_types()) {
    const double price = cluster.catalog().gpu(type).price_per_gpu_hour;
    cluster_cost += cluster.GpusOfType(type) * price * span / 3600.0;
    used_cost += metrics.busy_gpu_seconds_of_type(type) / 3600.0 * price;
  }
  add("cost_usd", cluster_cost);
  add("used_cost_usd", used_cost);
  if (cluster.has_pools() || cluster.has_spot()) {
    // Billed capacity (docs/autoscaling.md#output): a fixed group's nodes for the whole run, a
    // pool's nodes from request to release; per group (scope "group:NAME") and in all.
    const NodePools& pools = engine.node_pools();
    double billed = 0;
    double billed_cost = 0;
    const auto& groups = cluster.spec().groups;
    for (size_t g = 0; g < groups.size(); ++g) {
      const double seconds =
          groups[g].autoscale.enabled
              ? pools.BilledGpuSeconds(static_cast<int>(g), metrics.last_time())
              : static_cast<double>(groups[g].count + groups[g].spares) *
                    groups[g].gpus_per_node * span;
      const double cost = seconds / 3600.0 * cluster.GroupPrice(static_cast<int>(g));
      const std::string scope =
          "group:" + (groups[g].name.empty() ? std::to_string(g) : groups[g].name);
      add("billed_gpu_hours", seconds / 3600.0, scope);
      add("billed_cost_usd", cost, scope);
      billed += seconds;
      billed_cost += cost;
    }
    add("billed_gpu_hours", billed / 3600.0);
    add("billed_cost_usd", billed_cost);
    if (billed > 0) add("billed_gpu_utilization", metrics.busy_gpu_seconds() / billed);
  }
  // OOM rate: share of the jobs that started at least once whose start ran out of memory.
  add("oom_rate", started > 0 ? static_cast<double>(oom_jobs) / started : 0.0);
  add("oom_jobs", static_cast<double>(oom_jobs));
  add("oom_failures", static_cast<double>(oom_failures));
  add("oom_wasted_gpu_hours", oom_gpu_seconds / 3600);
  if (oom_jobs > 0) add("oom_delay_mean_seconds", oom_delay / oom_jobs);
  if (!oom_jct.empty()) {
    double sum = 0;
    for (double x : oom_jct) sum += x;
    add("oom_jct_mean_seconds", sum / oom_jct.size());
  }
  add("preemptions", static_cast<double>(preemptions));
  // Per job that started at least once (the jobs a policy could preempt).
  add("preemptions_per_job", started > 0 ? static_cast<double>(preemptions) / started : 0.0);
  // In job order, as sums over every job round (the jobs without costs add zero).
  int64_t restarts = 0;
  double preemption_gpu_seconds = 0;
  double borrowed_gpu_seconds = 0;
  for (const JobId id : engine.JobsWithCosts()) {
    const JobCosts& costs = engine.costs(id);
    restarts += costs.restarts;
    preemption_gpu_seconds += costs.preemption_gpu_seconds;
    borrowed_gpu_seconds += costs.borrowed_gpu_seconds;
  }
  add("restarts", static_cast<double>(restarts));
  add("preemption_gpu_hours", preemption_gpu_seconds / 3600);
  add("borrowed_gpu_hours", borrowed_gpu_seconds / 3600);
  // The defragmenter's moves (docs/defragmentation.md#metrics): rows only in runs with --defrag,
  // so that runs without it keep their rows.
  if (engine.options().defrag) {
    int64_t migrations = 0;
    double migration_gpu_seconds = 0;
    for (const JobId id : engine.JobsWithCosts()) {
      migrations += engine.costs(id).migrations;
      migration_gpu_seconds += engine.costs(id).migration_gpu_seconds;
    }
    add("migrations", static_cast<double>(migrations));
    add("migration_gpu_hours", migration_gpu_seconds / 3600);
  }
  add("lost_gpu_hours", engine.lost_gpu_seconds() / 3600);
  // GPU memory over-commit (docs/overcommit.md): rows only when it is on (its failure-log cause).
  const FailureLog& log = engine.failure_log();
  for (size_t c = 0; c < log.causes().size(); ++c) {
    if (log.causes()[c].name != "gpu-memory") continue;
    add("oom_kills", static_cast<double>(log.totals()[c].interruptions));
    add("oom_kill_lost_gpu_hours", log.totals()[c].recompute_gpu_seconds / 3600);
  }
  add("failures", static_cast<double>(engine.failures()));
  add("gpu_hours_down", engine.down_gpu_seconds() / 3600);
  add("node_hours_down", engine.down_node_seconds() / 3600);
  add("checkpoint_gpu_hours", engine.checkpoint_gpu_seconds() / 3600);
  AddReliabilitySummaries(engine, add);
  // Wait reasons (docs/metrics.md#wait-reasons): the queued time of all jobs by reason, in hours
  // and as a share of the total; reasons no job waited for have no row.
  const std::array<double, kWaitReasonCount>& waited = engine.wait_reasons().totals();
  double waited_total = 0;
  for (double seconds : waited) waited_total += seconds;
  for (int r = 0; r < kWaitReasonCount; ++r) {
    if (!(waited[r] > 0)) continue;
    const std::string scope = std::string("reason:") + WaitReasonName(static_cast<WaitReason>(r));
    add("wait_reason_hours", waited[r] / 3600, scope);
    add("wait_reason_share", waited[r] / waited_total, scope);
  }
  if (HasDeadlines(trace)) {
    SlaTally sla;
    for (size_t i = 0; i < runs.size(); ++i) sla.Add(trace.DeadlineOf(trace.jobs[i]), runs[i]);
    sla.Emit("all", add);
  }
  AddGroupSummaries(engine, options.bsld_threshold_seconds, add);
  return out;
}

}  // namespace clustersim
