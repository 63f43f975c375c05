// Comparisons that cannot mislead (docs/metrics.md#comparing-runs). Whatever puts runs side by
// side — `clustersim compare` and `report`, the Python module's Database.compare, and
// scripts/plot.py in its own Python — first checks that the runs saw the same jobs, and gives the
// figures that depend on a run's length over one horizon shared by all of them.
//
// Same jobs: the same trace (by SHA-256), the same trace filters, and the same set of jobs
// rejected at arrival (by job index, which the trace and filters fix). Runs of different seeds
// are replications: they must replay the same trace with the same filters, but what the seed
// draws may differ between them (the jobs --inflate makes, models that do not fit and are
// rejected), so the jobs themselves are compared among the runs of each seed. Runs that differ
// are described job kind by job kind — "run 3 (easy/first-fit) rejected 1,088 jobs that run 1
// (fcfs/first-fit) accepted: 1,088 like "requests 0 GPUs with 2 CPUs ..." (jobs p1, p7, p9, ...)"
// — and the caller refuses unless asked to go on.
//
// Shared horizon: from the first submission of any run to the end of the last (the simulated
// clock when it stopped: its last job's end, or the stop time). Utilization and the cluster's
// rental cost are taken over it, so a run that ends later is not made to look less used or more
// expensive for the same work: utilization = busy GPU-seconds / (GPUs x horizon), computed exactly
// as gpu_utilization x span / horizon (both are busy GPU-seconds / GPUs); cost = the cluster's
// cost per second (cost_usd / span) x horizon.
#ifndef CLUSTERSIM_SIM_OUTPUT_COMPARISON_H_
#define CLUSTERSIM_SIM_OUTPUT_COMPARISON_H_

#include <cstdint>
#include <string>
#include <vector>

struct sqlite3;

namespace clustersim {

struct RejectedJob {
  int64_t index = 0;  // job_index: the job's place in the filtered trace
  std::string id;
  std::string reason;
};

// What a run saw and the figures the horizon rescales, read back from its database.
struct ComparedRun {
  int64_t run_id = -1;  // -1: a run not in the compared database (named by `name` alone)
  std::string name;     // "policy/placement", with " seed S" when asked for
  int64_t seed = 0;
  std::string trace_path, trace_sha256, trace_filter;
  int64_t jobs = 0;
  std::vector<RejectedJob> rejected;  // by job index
  double first_submit_seconds = 0;    // the run's first submission
  double end_seconds = 0;             // the simulated clock when the run ended
  double span_seconds = 0;            // summary simulated_seconds: first event to the end
  double gpu_utilization = 0;         // summary, over the run's own span (NaN: none)
  double cost_usd = 0;                // summary: the whole cluster rented over the span
};

// Reads run `run_id` of the open database `db` (named `path` in errors). Throws InputError
// naming the file for an unknown run.
ComparedRun ReadComparedRun(sqlite3* db, const std::string& path, int64_t run_id);
// The same from the database file `path`, opened read-only.
ComparedRun ReadComparedRun(const std::string& path, int64_t run_id);

// How the runs' jobs differ, one sentence per difference, each run against the first of its seed
// and the first of each seed against the very first; empty when they saw the same jobs.
std::vector<std::string> JobSetDifferences(const std::vector<ComparedRun>& runs);

// The message of a refusal: the differences, then `how_to_allow` (e.g. "--allow-different-jobs
// compares them anyway").
std::string DifferentJobsMessage(const std::vector<std::string>& differences,
                                 const std::string& how_to_allow);

struct Horizon {
  double start_seconds = 0;
  double end_seconds = 0;
  double seconds() const { return end_seconds - start_seconds; }
};
// First submission of any run to the latest end. REQUIRES: runs not empty.
Horizon SharedHorizon(const std::vector<ComparedRun>& runs);

// GPU utilization of `run` over `horizon` (NaN if the run has no utilization or the horizon is
// empty) and the cluster's cost over it, USD.
double UtilizationOver(const ComparedRun& run, const Horizon& horizon);
double CostOver(const ComparedRun& run, const Horizon& horizon);

// 1088 -> "1,088".
std::string WithThousands(int64_t value);

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_OUTPUT_COMPARISON_H_
