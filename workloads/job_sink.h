// Where trace readers deliver their jobs, and the filters a run applies to a trace
// (docs/workloads.md#filters).
//
// A reader hands every record it parses to a JobSink, in file order. The sink applies the
// filter as the jobs arrive, so only the jobs a run keeps are stored: reading a million-line
// file for its first thousand jobs, or one virtual cluster, takes memory for those jobs only.
//
// Filters, applied in this order: time window on submit time [start, end); keep only listed
// virtual clusters / users / trace statuses; keep the first N jobs in submission order; load
// scaling (every inter-arrival gap multiplied by a factor: > 1 lightens, < 1 intensifies the
// load; times stay relative to the first kept submission); GPU-type mapping (names in each job's
// gpu_type list renamed, e.g. for traces from older hardware); dropping the CPU and host-memory
// demands (docs/resources.md: the run then places on GPUs only); priority classes named in the
// trace mapped to levels (--priority-map, then the built-in table). Excluded jobs are counted by
// reason: a job leaves a run only through an explicit filter, never silently.
//
// Times: readers of wall-clock formats hand over absolute times and the sink subtracts the
// origin, the earliest submission among all records (kept or not). The window is on those
// relative times, so it needs the origin before the first record: LoadTrace reads such a file
// twice when a window is set (once for the origin), and once otherwise.
#ifndef CLUSTERSIM_WORKLOADS_JOB_SINK_H_
#define CLUSTERSIM_WORKLOADS_JOB_SINK_H_

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/engine/job.h"

namespace clustersim {

struct TraceFilter {
  double window_start = -std::numeric_limits<double>::infinity();
  double window_end = std::numeric_limits<double>::infinity();
  std::set<std::string> vcs, users, statuses;  // empty = keep all
  int64_t first_n = -1;                        // < 0 = all
  // Multiplies the arrival rate: gaps between kept submissions are divided by it, from the
  // first kept job on (> 1 = heavier load).
  double load_factor = 1.0;
  std::map<std::string, std::string> gpu_type_map;
  // The trace's submit times are its recorded start times (a log that records starts but not
  // waits, as the NASA iPSC/860 log says of itself): a job with no recorded start gets
  // recorded_start = submit_time and, without a recorded end, recorded_end = submit_time +
  // duration. Applied before the load factor.
  bool submit_is_start = false;
  bool drop_host_demands = false;  // zero every job's cpu_milli and memory_mib
  // > 0: workload inflation (InflateTrace in workloads/transforms.h), applied by `run` once the
  // cluster is known; 0 = off.
  double inflate = 0;
  // Class name (lower case) -> level (--priority-map), before the built-in table
  // (sim/engine/priority_class.h). A job whose class is in neither gets level 0.
  std::map<std::string, int> priority_map;

  bool IsIdentity() const;
  bool HasWindow() const { return !std::isinf(window_start) || !std::isinf(window_end); }
  // A JSON object of the non-default settings, for the `runs` table.
  std::string ToJson() const;
  // Throws InputError for bad settings (a load factor <= 0, a window with end <= start).
  void Validate() const;
};

struct FilterCounts {
  int64_t before = 0;
  int64_t outside_window = 0;
  int64_t other_vc = 0;
  int64_t other_user = 0;
  int64_t other_status = 0;
  int64_t beyond_first_n = 0;
  int64_t kept = 0;
};

class JobSink {
 public:
  // `origin` is subtracted from every submit time; NaN = the earliest submit time of all jobs
  // added, known at Finish (then `filter` must not have a window). Throws InputError for a bad
  // filter.
  JobSink(const TraceFilter& filter, double origin);

  // `attempts`: the job's recorded running intervals (in the reader's clock, like submit_time),
  // for formats that record several per job; kept with the job when the job is kept.
  // `constraints`: its deadline, data nodes and node limit, if it has any (copied; the job's
  // Job::constraints is set to index the sink's table, or 0).
  void Add(Job&& job, std::span<const RecordedAttempt> attempts = {},
           const JobConstraints* constraints = nullptr);
  // A reader that knows how many records follow may say so; storage is reserved only when
  // every record would be kept.
  void ReserveHint(size_t records);
  // A record read names partition `name` (SWF field 16; Trace::partitions), kept or not.
  void CountPartition(std::string_view name) { ++partitions_[std::string(name)]; }
  const std::map<std::string, int64_t>& partitions() const { return partitions_; }

  // The earliest submit time added so far (+inf before the first job), in the file's clock.
  double earliest() const { return earliest_; }
  // The most jobs held at once (for tests and benchmarks of the memory bound).
  size_t max_held() const { return max_held_; }

  // The kept jobs sorted by (relative submit time, line, arrival order), with the load factor
  // applied and GPU types mapped. Recorded times are shifted by the origin like submit times
  // (the load factor never moves them).
  std::vector<Job> Finish(FilterCounts* counts);
  // After Finish: the kept jobs' recorded attempts, in job order (Trace::recorded_attempts).
  std::vector<RecordedAttempt> TakeAttempts() { return std::move(attempts_); }
  // After Finish: the table the kept jobs' Job::constraints index (Trace::constraints). Entries of
  // jobs that were not kept stay, unused.
  std::vector<JobConstraints> TakeConstraints() { return std::move(constraints_); }

  // The Unix time of the trace's time 0 (Trace::unix_origin). A reader of relative times that
  // knows it says so (SWF's UnixStartTime); a reader whose absolute times are Unix seconds
  // (dates) calls MarkUnixClock, and the origin subtracted at Finish is then the Unix origin.
  void SetUnixOrigin(double unix_seconds) { unix_origin_ = unix_seconds; }
  void MarkUnixClock() { unix_clock_ = true; }
  // After Finish: the Unix time of time 0, or NaN if unknown.
  double unix_origin() const { return unix_origin_; }

 private:
  // Keeps the first_n earliest of kept_ (stable), counting the rest.
  void TrimToFirstN();

  const TraceFilter& filter_;
  double origin_;
  bool origin_known_;
  double earliest_ = std::numeric_limits<double>::infinity();
  FilterCounts counts_;
  std::vector<Job> kept_;
  bool any_priority_class_ = false;  // a kept job names a priority class (Finish maps them)
  std::vector<RecordedAttempt> attempts_;
  std::vector<JobConstraints> constraints_;
  size_t max_held_ = 0;
  double unix_origin_ = std::numeric_limits<double>::quiet_NaN();
  bool unix_clock_ = false;
  std::map<std::string, int64_t> partitions_;
};

}  // namespace clustersim

#endif  // CLUSTERSIM_WORKLOADS_JOB_SINK_H_
