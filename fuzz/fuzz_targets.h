// Fuzz targets: one entry point per parser of outside data (every trace reader, auto-detection,
// the openb node list -> cluster conversion, cluster specs, hardware catalogs, run configs, the
// command line's options, sweep specs and the Python module's run arguments), and one that
// simulates a fuzzed trace under every policy with the engine's invariant checks on.
//
// A target takes arbitrary bytes and feeds them to the parser the way the program does (readers
// take paths, so the bytes are written to a file in a private temporary folder first). Bad input
// must end in InputError, which a target swallows: that is the expected outcome. Anything else
// escapes the target and is a finding: another exception type (std::out_of_range, nlohmann's
// exceptions, InternalError from a CHECK), a FuzzFinding thrown by the target's own checks of
// what the parser produced (a job with a negative or non-finite time, a cluster-from spec that
// does not load back, a converted trace that does not read back), or a crash / sanitizer report.
//
// The same functions run in two builds: fuzz/fuzz_main.cc wraps them in LLVMFuzzerTestOneInput
// (clang, libFuzzer, ASan + UBSan; scripts/fuzz.sh) and tests/fuzz/fuzz_replay_test.cc replays the
// seed corpus (fuzz/corpus/<target>/) and every input that once found a bug
// (fuzz/regressions/<target>/) through them in the normal build.
#ifndef CLUSTERSIM_FUZZ_FUZZ_TARGETS_H_
#define CLUSTERSIM_FUZZ_FUZZ_TARGETS_H_

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace clustersim::fuzz {

// A parser accepted input but produced something it must never produce.
class FuzzFinding : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

struct FuzzTarget {
  const char* name;     // e.g. "native-csv"; also the folder name under fuzz/corpus and regressions
  const char* summary;  // what the bytes are and what is called
  void (*run)(std::string_view input);
};

// Every target, in a fixed order.
const std::vector<FuzzTarget>& FuzzTargets();
// Returns the target named `name`, or nullptr.
const FuzzTarget* FindFuzzTarget(std::string_view name);

// The separator between the job table and the task table in a pai2020 input (see the target).
inline constexpr std::string_view kPaiTaskTableMarker = "\n--- pai_task_table.csv ---\n";

}  // namespace clustersim::fuzz

#endif  // CLUSTERSIM_FUZZ_FUZZ_TARGETS_H_
