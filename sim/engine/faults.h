// Fault injection and checkpoints (docs/engine.md#failures): what fails, when, and what a job
// loses.
//
// Failures take out a whole node or one GPU. They come from exponential times between failures
// (a mean time between failures per GPU type, for nodes and for single GPUs, drawn from the
// run's seed) or from a failure trace (CSV `time,node,duration[,gpu]`, read by
// workloads/failure_trace.h). A failed unit is
// repaired after the MTTR (a trace entry's own duration); until then its GPUs are out of
// placement. Random failures of a unit restart their clock at its repair.
//
// A running job whose GPU fails loses everything since its last checkpoint and goes back to the
// queue (one restart). Checkpoints: every `checkpoint_interval` seconds of computing a job saves
// its state, which takes `checkpoint_cost` seconds without progress; a restart after a failure
// pays `restore_cost` seconds before progress resumes. Preemption keeps its own cost
// (EngineOptions::preemption_cost_seconds) and loses nothing: the policy saves before it stops.
//
// A failure model (failure_model; docs/reliability.md) adds failures by cause and domain, each
// with its detection and restart time; per-job checkpoint policies (checkpoint) and hot spares
// (the cluster spec's node groups) decide what an interruption costs.
#ifndef CLUSTERSIM_SIM_ENGINE_FAULTS_H_
#define CLUSTERSIM_SIM_ENGINE_FAULTS_H_

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "sim/hardware/cluster.h"
#include "sim/models/failure_catalog.h"
#include "sim/models/reliability.h"

namespace clustersim {

struct FailureRecord {
  double time = 0;  // seconds
  int node = 0;
  int gpu = -1;         // GPU within the node; -1 = the whole node
  double duration = 0;  // seconds until repaired
  int64_t line = 0;
};

struct FaultOptions {
  static constexpr double kNever = std::numeric_limits<double>::infinity();
  // By catalog GPU type; empty = none. Seconds.
  std::vector<double> node_mtbf_seconds;
  std::vector<double> gpu_mtbf_seconds;
  double mttr_seconds = 4 * 3600.0;
  std::vector<FailureRecord> trace;
  std::string trace_path;
  double checkpoint_interval_seconds = kNever;  // of computing time; kNever = no checkpoints
  double checkpoint_cost_seconds = 0;
  double restore_cost_seconds = 0;
  uint64_t seed = 0;
  // A failure model (docs/reliability.md; `--failure-model fleet`): failures by cause and domain,
  // drawn by sim/engine/fleet_failures.h. nullptr = none. Must outlive the engine.
  const FailureCatalog* failure_model = nullptr;
  // How often jobs checkpoint (sim/models/reliability.h PlanCheckpoints): a fixed interval (the
  // default: checkpoint_interval_seconds), or Young's or Daly's optimum per job from its failure
  // rate and checkpoint cost; synchronous or asynchronous.
  CheckpointSettings checkpoint;

  bool failures() const;
  bool checkpoints() const {
    return checkpoint_interval_seconds < kNever || checkpoint.rule != CheckpointRule::kFixed;
  }
  bool enabled() const { return failures() || checkpoints(); }
  // The non-default settings as a JSON object, for the `runs` table ("{}" when off).
  std::string ToJson(const HardwareCatalog& catalog) const;
};

// Parses an MTBF option: "HOURS" for every GPU type, or "TYPE=HOURS[,TYPE=HOURS...]" (other
// types never fail); each HOURS is a duration (sim/util/duration.h) whose plain number counts
// hours ("2000", "2000h", "90d"). Returns seconds by catalog type. Throws InputError naming
// `option`.
std::vector<double> ParseMtbfHours(const std::string& text, const HardwareCatalog& catalog,
                                   const std::string& option);

// Exponential variates from a 64-bit seed, the same on every platform (no <random>
// distributions, whose algorithms the standard leaves open).
class ExponentialSource {
 public:
  explicit ExponentialSource(uint64_t seed) : state_(seed) {}
  double Next(double mean);

 private:
  uint64_t state_;
};

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_ENGINE_FAULTS_H_
