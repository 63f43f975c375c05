// The sanity report printed before every run, trace statistics, and the native writer
// (docs/workloads.md). The filters themselves live in job_sink.h: readers apply them while reading.
#ifndef CLUSTERSIM_WORKLOADS_TRANSFORMS_H_
#define CLUSTERSIM_WORKLOADS_TRANSFORMS_H_

#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "sim/engine/job.h"
#include "sim/hardware/cluster.h"
#include "workloads/job_sink.h"

namespace clustersim {

// Applies `filter` to a trace already in memory (jobs sorted by submission, times relative to
// its origin), e.g. a generated one. Throws InputError for bad settings.
FilterCounts ApplyFilter(const TraceFilter& filter, Trace* trace);

// Workload inflation (`run --inflate F`, docs/workloads.md#inflation), as the FGD paper's
// artifact tunes its workloads (Weng et al., USENIX ATC'23; hkust-adsl/kubernetes-scheduler-
// simulator, TunePodsByNodeTotalResource). A job's GPU demand is gpu_milli for a share of one GPU,
// else gpus x 1000. With target = F x capacity_milli:
//   - the trace's jobs are shuffled;
//   - below target: jobs are drawn uniformly with replacement from the trace and appended after
//     them (copies, id "<id>-inflated-<k>", in draw order) until the next draw would take the
//     total demand above the target (that draw is not added; a draw of demand 0 is always added);
//   - above target: uniformly drawn jobs are removed until the total is at most the target;
// then job i arrives at i seconds (the recorded schedule is dropped: it no longer matches). Draws
// come from std::mt19937_64 seeded with `seed` (bounded draws by rejection, so the result is the
// same on every platform). Returns the number of jobs after.
// Throws InputError if no job requests GPUs. REQUIRES factor > 0, capacity_milli > 0.
size_t InflateTrace(Trace* trace, double factor, int64_t capacity_milli, uint64_t seed);

// Throws InputError unless `share` (`--split`) is in (0, 1): checked before a log is read.
void CheckSplitShare(double share);
// Where a log splits by submission (`validate --calibrate --split`, `site-from --split`): the
// submit time of the first job of the later part, the job at floor(share x jobs) in submission
// order (at least the second job, at most the last); jobs submitted at that time belong to the
// later part, so the earlier part is the window ending there (TraceFilter::window_end). Throws
// InputError naming `path` for fewer than two jobs, a share outside (0, 1), or a split that leaves
// the earlier part empty (every job submitted at the split time).
double SplitTime(const Trace& trace, double share, const std::string& path);

// Parses the command-line forms: window "START:END" (either side may be empty), lists "a,b",
// GPU map "OLD=NEW,OLD2=NEW2". Throw InputError naming the option.
void ParseWindow(const std::string& text, TraceFilter* filter);
std::set<std::string> ParseList(const std::string& text);
std::map<std::string, std::string> ParseGpuMap(const std::string& text);

// The sanity report (docs/workloads.md#sanity-report): each kind of problem with its count and the
// first offending line numbers of the source file.
struct SanityItem {
  std::string what;
  int64_t count = 0;
  std::vector<int64_t> first_lines;  // at most kSanityLines
};
inline constexpr size_t kSanityLines = 5;

struct SanityReport {
  std::vector<SanityItem> items;  // only kinds with count > 0
  bool clean() const { return items.empty(); }
  std::string ToText() const;
};

// `cluster` may be null (then jobs larger than the cluster are not checked). `file_submissions`
// false: the submit times are not the file's (--inflate gives one arrival a second in a shuffled
// order), so rows submitted earlier than a row above them are not reported.
SanityReport CheckTraceSanity(const Trace& trace, const Cluster* cluster,
                              bool file_submissions = true);

// Summary statistics for `clustersim trace stats`.
struct TraceStats {
  int64_t jobs = 0;
  double first_submit = 0, last_submit = 0;
  std::map<int, int64_t> jobs_by_gpus;
  double duration_mean = 0, duration_p50 = 0, duration_p90 = 0, duration_p99 = 0,
         duration_max = 0;
  double gpu_hours = 0;
  double arrivals_per_hour = 0;
  double offered_gpu_hours_per_day = 0;
  // The recorded schedule (traces/README.md): jobs with a recorded start, with a recorded end,
  // and recorded attempts.
  int64_t recorded_starts = 0, recorded_ends = 0, recorded_attempts = 0;
  // Jobs per priority level, and per class name as the trace gives it ("" = none) in each.
  std::map<int, std::map<std::string, int64_t>> jobs_by_priority;
};
TraceStats ComputeTraceStats(const Trace& trace);
// With `cluster_gpus` > 0, also the offered load relative to that many GPUs: GPU-hours demanded
// / (cluster_gpus x submission span), the busy fraction the trace's durations would keep the
// cluster at (1 = saturated) if every job ran exactly its trace duration.
std::string FormatTraceStats(const TraceStats& stats, int64_t cluster_gpus = 0);

// Writes `trace` in the native CSV format (all columns) through a temporary file renamed into
// place. Throws InputError when the file cannot be written or a job's text field holds a line
// break (the format has one job per line); text with commas, quotes, carriage returns or blanks
// at either end is quoted, so the native reader reads back the same jobs.
void WriteNativeCsv(const Trace& trace, const std::string& path);

}  // namespace clustersim

#endif  // CLUSTERSIM_WORKLOADS_TRANSFORMS_H_
