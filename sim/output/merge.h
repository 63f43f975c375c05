// Joining result databases (`clustersim merge`, results/README.md) and reading them back.
//
// MergeDatabases copies every run of each input database, in the order given, into one output
// database through the one writer (sim/output/sqlite_writer.h): runs get new run ids there and
// their jobs, timeseries and summary rows follow them. Inputs are opened read-only and must hold
// the clustersim schema; anything else is rejected before the output is touched. The output is
// written like every other: a new file through a temporary sibling renamed into place, an
// existing one (which must be a clustersim database) in one transaction. On any error nothing
// is written.
//
// Two runs are "the same run" when they agree on every column of kRunKeyColumns: the same inputs
// (trace and cluster by SHA-256, filters, parameters, seed, models) and therefore, by the
// simulator's determinism, the same rows. Merging the same run twice is an error naming both
// files, unless duplicates are skipped (the later copy is left out) or allowed (both copied).
#ifndef CLUSTERSIM_SIM_OUTPUT_MERGE_H_
#define CLUSTERSIM_SIM_OUTPUT_MERGE_H_

#include <cstdint>
#include <string>
#include <vector>

namespace clustersim {

// The runs columns that identify a run (results/README.md, "merge").
inline constexpr const char* kRunKeyColumns[] = {"trace_sha256",
                                                 "cluster_sha256",
                                                 "policy",
                                                 "placement",
                                                 "params",
                                                 "runtime_model",
                                                 "seed",
                                                 "trace_filter",
                                                 "timeseries_interval_seconds",
                                                 "preemption_cost_seconds",
                                                 "faults",
                                                 "models"};

struct MergeOptions {
  bool reject_duplicates = true;
  // A run already in `out` or in an earlier input is left out instead of rejected (only with
  // reject_duplicates).
  bool skip_duplicates = false;
};

struct MergeResult {
  int64_t runs = 0;                  // runs copied
  int64_t failed_runs = 0;           // of which recorded with status failed or interrupted
  std::vector<int64_t> new_run_ids;  // in input order
  // With skip_duplicates: each run left out, "FILE (run N) = FILE (run M)".
  std::vector<std::string> skipped;
};

// Copies every run of `inputs` into `out`. Throws InputError naming the file for an unreadable
// or foreign input, an input that is the output itself, or (with reject_duplicates and without
// skip_duplicates) a run already present in `out` or in an earlier input — naming both files and
// run ids.
MergeResult MergeDatabases(const std::string& out, const std::vector<std::string>& inputs,
                           const MergeOptions& options = {});

// Expands each argument that is a directory into its `*.sqlite` files sorted by name, leaving out
// `out` (the merge output may live in the same directory); files are kept as given. Throws
// InputError for an argument that does not exist.
std::vector<std::string> ExpandDatabaseArguments(const std::vector<std::string>& arguments,
                                                 const std::string& out);

// The `status` of every run in the clustersim database `path`, in run_id order. Throws
// InputError when it cannot be opened or is not a clustersim database.
std::vector<std::string> ReadRunStatuses(const std::string& path);

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_OUTPUT_MERGE_H_
