// Shared by the sweep, merge and compare tests (tests/app/sweep_test.cc,
// tests/sim/output/merge_test.cc, tests/cli/experiment_commands_test.cc): the tiny inputs, a spec
// of eight runs, and the rows of a database keyed by run identity.
//
// Inputs: tests/data/tiny_trace.csv on tests/data/tiny_cluster.json (two nodes of 4 A100-80GB,
// node 0 = GPUs 0-3, node 1 = GPUs 4-7; runtime model `trace` as the cluster is homogeneous):
//   job  submit gpus duration walltime
//   a      0     4    100      -
//   b     10     8     50      -
//   c     20     2     30      -
//   007   30    16     10      -      more GPUs than the cluster: rejected at arrival
//   e     40     1     10      -
//   f    200     1    100     40      killed at its wall time (timeout) unless walltime=exact
//
// Hand-computed schedules used below (wait = start - submit, over the 5 jobs that start):
//   fcfs: a 0-100; b (8 GPUs) waits for the whole cluster, 100-150; c and e wait behind it
//     (strict blocking): c 150-180, e 150-160; f 200-240 (timeout).
//     waits 0, 90, 130, 110, 0 -> mean 66 s.
//   easy (walltime from the trace; a job without one is planned with its true duration): at 10
//     b is blocked with a reservation at 100 (when a ends) and no extra GPUs; c (ends 50 <= 100)
//     starts at 20 and e (ends 50) at 40 on node 1; b 100-150; f 200-240 (timeout).
//     waits 0, 90, 0, 0, 0 -> mean 18 s. With walltime=exact f runs its 100 s and completes.
//   sjf (shortest first, blocking): at 20 c (30 s) is ahead of b (50 s) and fits: 20-50; at 40
//     e (10 s) is the head and fits: 40-50; b 100-150: the same waits as easy, mean 18 s.
//   fcfs with load factor 2 (inter-arrival gaps doubled: submits 0, 20, 40, 60, 80, 400):
//     a 0-100, b 100-150, c 150-180, e 150-160, f 400-440; waits 0, 80, 110, 70, 0 -> mean 52 s.
#ifndef CLUSTERSIM_TESTS_APP_SWEEP_TEST_UTIL_H_
#define CLUSTERSIM_TESTS_APP_SWEEP_TEST_UTIL_H_

#include <algorithm>
#include <string>
#include <vector>

#include "tests/cli/cli_test_util.h"

namespace clustersim::testing {

inline constexpr int kExitBadInput = 2;
inline constexpr int kExitRunsFailed = 1;

// Copies the tiny trace and cluster into `dir` and writes a spec naming them relatively (so the
// spec's folder, not the working directory, must be what relative paths are resolved against).
inline std::string WriteSpec(const TempDir& dir, const std::string& name, const std::string& rest) {
  WriteFile(dir.File("tiny_trace.csv"), ReadFile(TestData("tiny_trace.csv")));
  WriteFile(dir.File("tiny_cluster.json"), ReadFile(TestData("tiny_cluster.json")));
  const std::string path = dir.File(name);
  WriteFile(path,
            R"({"traces": ["tiny_trace.csv"], "clusters": ["tiny_cluster.json"])" + rest + "}");
  return path;
}

// The 2 policies x 2 seeds x 2 load factors spec: 8 runs (load factor 0.5: half the arrival
// rate, gaps twice as long). Index order (the last list varies fastest): policy, load factor,
// seed.
inline std::string EightRunSpec(const TempDir& dir) {
  return WriteSpec(dir, "spec.json",
                   R"(, "policies": ["fcfs", "easy"], "load_factor": [1, 0.5], "seeds": [0, 1])");
}

inline std::vector<std::string> RunFiles(const std::string& dir) {
  std::vector<std::string> files = EntriesContaining(dir, ".sqlite");
  std::sort(files.begin(), files.end());
  return files;
}

inline std::vector<std::string> Statuses(const std::string& path) {
  Database db(path);
  std::vector<std::string> out;
  for (const auto& row : db.Query("SELECT status FROM runs ORDER BY run_id"))
    out.push_back(*row[0]);
  return out;
}

// Every row of `table`, each prefixed by its run's identity instead of its run_id, sorted:
// equal results for equal runs whatever the run ids and the order the runs were written in.
inline std::vector<std::string> RowsByRunKey(const std::string& path, const std::string& table) {
  Database db(path);
  std::vector<std::string> names;
  const auto rows = db.Query(
      "SELECT r.policy, r.placement, r.params, r.seed, r.trace_filter, t.* "
      "FROM " +
          table + " t JOIN runs r ON r.run_id = t.run_id",
      &names);
  std::vector<std::string> out;
  for (const auto& row : rows) {
    std::string text;
    for (size_t c = 0; c < row.size(); ++c) {
      if (c >= 5 && names[c] == "run_id") continue;
      text += (row[c] ? *row[c] : "NULL") + "|";
    }
    out.push_back(text);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace clustersim::testing

#endif  // CLUSTERSIM_TESTS_APP_SWEEP_TEST_UTIL_H_
