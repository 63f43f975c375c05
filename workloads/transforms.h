// Transforms on any trace (DESIGN.md §9) and the sanity report printed before every run.
//
// Transforms, applied in this order: time window on submit time [start, end); keep only listed
// virtual clusters / users / trace statuses; keep the first N jobs in submission order; load
// scaling (every inter-arrival gap multiplied by a factor: > 1 lightens, < 1 intensifies the
// load; times stay relative to the first kept submission); GPU-type mapping (names in each job's
// gpu_type list renamed, e.g. for traces from older hardware). Excluded jobs are counted by
// reason: a job leaves a run only through an explicit filter, never silently.
#ifndef CLUSTERSIM_WORKLOADS_TRANSFORMS_H_
#define CLUSTERSIM_WORKLOADS_TRANSFORMS_H_

#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "sim/cluster.h"
#include "sim/job.h"

namespace clustersim {

struct TraceFilter {
  double window_start = -std::numeric_limits<double>::infinity();
  double window_end = std::numeric_limits<double>::infinity();
  std::set<std::string> vcs, users, statuses;  // empty = keep all
  int64_t first_n = -1;                        // < 0 = all
  double load_scale = 1.0;
  std::map<std::string, std::string> gpu_type_map;

  bool IsIdentity() const;
  // A JSON object of the non-default settings, for the `runs` table.
  std::string ToJson() const;
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

// Applies `filter` to `trace` (jobs sorted by submission). Throws InputError for bad settings
// (a load scale <= 0, a window with end <= start).
FilterCounts ApplyFilter(const TraceFilter& filter, Trace* trace);

// Parses the command-line forms: window "START:END" (either side may be empty), lists "a,b",
// GPU map "OLD=NEW,OLD2=NEW2". Throw InputError naming the option.
void ParseWindow(const std::string& text, TraceFilter* filter);
std::set<std::string> ParseList(const std::string& text);
std::map<std::string, std::string> ParseGpuMap(const std::string& text);

// The sanity report (DESIGN.md §9): each kind of problem with its count and the first offending
// line numbers of the source file.
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

// `cluster` may be null (then jobs larger than the cluster are not checked).
SanityReport CheckTraceSanity(const Trace& trace, const Cluster* cluster);

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
};
TraceStats ComputeTraceStats(const Trace& trace);
std::string FormatTraceStats(const TraceStats& stats);

// Writes `trace` in the native CSV format (all columns) through a temporary file renamed into
// place. Throws InputError when the file cannot be written or a job's text field holds a line
// break (the format has one job per line); text with commas, quotes, carriage returns or blanks
// at either end is quoted, so the native reader reads back the same jobs.
void WriteNativeCsv(const Trace& trace, const std::string& path);

}  // namespace clustersim

#endif  // CLUSTERSIM_WORKLOADS_TRANSFORMS_H_
