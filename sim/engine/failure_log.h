// What failures did in a run (docs/reliability.md#metrics): one record per failure (the
// `failures` table: time, cause, domain, nodes, jobs hit), totals per cause (interruptions and
// GPU-hours lost to recomputation, restart overhead and waiting for capacity), per job what its
// interruptions cost beyond JobCosts (kept only for jobs that were interrupted), and per job the
// seconds of productive computing behind its ETTR. Owned by the engine, which fills it only when
// failures or checkpoints are on; read by the summary and the writer after the run.
#ifndef CLUSTERSIM_SIM_ENGINE_FAILURE_LOG_H_
#define CLUSTERSIM_SIM_ENGINE_FAILURE_LOG_H_

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/engine/job.h"

namespace clustersim {

// A cause as the log names it: a failure model's cause, or one of the failure modes that predate
// failure models ("node" and "gpu" for --node-mtbf and --gpu-mtbf, "trace" for --failure-trace).
struct LoggedCause {
  std::string name;
  std::string component;
  std::string domain;  // gpu, node, rack, cluster or job
};

// One failure.
struct FailureEvent {
  double time = 0;
  int cause = 0;  // index into FailureLog::causes()
  int first_node = 0;
  int node_count = 0;
  int first_gpu = -1;   // the GPU struck (gpu and job domains), else the first of its nodes
  int gpus_out = 0;     // GPUs taken out of service (0 for domains that take nothing out)
  int spares_used = 0;  // spare nodes that replaced failed ones for the jobs hit
  double repair_seconds = 0;
  uint32_t jobs_begin = 0;  // the jobs hit: job_ids()[jobs_begin, jobs_begin + jobs_hit)
  uint32_t jobs_hit = 0;
};

struct CauseTotals {
  int64_t failures = 0;              // events of the cause (hitting a job or not)
  int64_t interruptions = 0;         // jobs interrupted
  int64_t swaps = 0;                 // spare nodes swapped in
  double recompute_gpu_seconds = 0;  // work lost since the last usable checkpoint
  double restart_gpu_seconds = 0;    // detection, swap, restart and restore paid
  double wait_gpu_seconds = 0;       // queued after the interruption until restarted
};

// An interrupted job's costs beyond JobCosts, and the state of its pending restart.
struct JobReliability {
  double restart_gpu_seconds = 0;
  double wait_gpu_seconds = 0;
  int swaps = 0;
  // While queued after an interruption: when it was interrupted, the detection time not yet
  // paid (the wait for capacity covers it) and the cause; -1 = none pending.
  double interrupted_at = -1;
  double pending_detection = 0;
  int wait_cause = -1;
  // The cause of the restart overhead the job is paying (-1 = none, or a preemption's), and the
  // seconds of it still due. Overhead is paid in the order it was owed: a preemption's cost added
  // while the restart is being paid (ActiveRun::overhead_left) comes after it and is not the
  // cause's.
  int overhead_cause = -1;
  double cause_overhead_left = 0;
};

class FailureLog {
 public:
  // Registers a cause; returns its index.
  int AddCause(LoggedCause cause);
  const std::vector<LoggedCause>& causes() const { return causes_; }
  const std::vector<CauseTotals>& totals() const { return totals_; }
  CauseTotals& totals(int cause) { return totals_[cause]; }

  // Appends a failure and the jobs it hit (job order).
  void Record(FailureEvent event, std::span<const JobId> jobs);
  const std::vector<FailureEvent>& events() const { return events_; }
  const std::vector<JobId>& job_ids() const { return job_ids_; }

  // The interrupted jobs' records (created on first use).
  JobReliability& job(JobId id) { return jobs_[id]; }
  const JobReliability* find(JobId id) const {
    const auto it = jobs_.find(id);
    return it == jobs_.end() ? nullptr : &it->second;
  }
  JobReliability* find(JobId id) {
    const auto it = jobs_.find(id);
    return it == jobs_.end() ? nullptr : &it->second;
  }
  bool has_jobs() const { return !jobs_.empty(); }

  // Seconds each job spent computing work it kept (its ETTR's numerator); sized by the engine.
  std::vector<double>& productive_seconds() { return productive_; }
  const std::vector<double>& productive_seconds() const { return productive_; }

 private:
  std::vector<LoggedCause> causes_;
  std::vector<CauseTotals> totals_;
  std::vector<FailureEvent> events_;
  std::vector<JobId> job_ids_;
  std::unordered_map<JobId, JobReliability> jobs_;  // looked up by id, never iterated
  std::vector<double> productive_;
};

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_ENGINE_FAILURE_LOG_H_
