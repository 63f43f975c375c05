// Failure models (docs/reliability.md): what interrupts training jobs, how often, what a failure
// takes out and what it costs. A FailureCatalog is a list of causes, each with
//   - a rate: events per unit-hour, the unit being a GPU, a node or the whole cluster (`per`);
//   - a domain: what one event takes out or hits, given the unit it struck: the GPU, its node,
//     every node of its rack (leaf switch; the cluster spec's network.nodes_per_rack), every
//     running job of the cluster (no hardware out), or only the job holding the unit (a software
//     failure: the job restarts where it is, no hardware out);
//   - detection seconds (from the failure until the job is stopped for a restart, its GPUs held
//     without progress), restart seconds (relaunching it, before its checkpoint is restored) and a
//     repair time for the hardware taken out (the run's MTTR unless the cause gives one).
// The built-in catalog "fleet" (sim/data/failures.json, compiled in) holds the 419 unexpected
// interruptions of Llama 3 405B pre-training (Dubey et al. 2024, Table 5) as rates per GPU-hour
// and node-hour; a JSON file of the same form replaces it (`--failure-model FILE`). Immutable
// after loading. Pure data and its parsing; no engine state.
//
// A cause is general enough for other interruptions too (a spot node taken back is a cause per
// node with domain node, a notice as its detection time and its own repair time).
#ifndef CLUSTERSIM_SIM_MODELS_FAILURE_CATALOG_H_
#define CLUSTERSIM_SIM_MODELS_FAILURE_CATALOG_H_

#include <string>
#include <vector>

namespace clustersim {

enum class FailureUnit { kGpu, kNode, kCluster };
enum class FailureDomain { kGpu, kNode, kRack, kCluster, kJob };

const char* FailureUnitName(FailureUnit unit);
const char* FailureDomainName(FailureDomain domain);

struct FailureCause {
  std::string name;       // e.g. "faulty-gpu"
  std::string component;  // what failed, as the source names it
  FailureUnit per = FailureUnit::kNode;
  FailureDomain domain = FailureDomain::kNode;
  double rate_per_unit_hour = 0;  // events per unit-hour (> 0)
  double events = 0;              // the source's count the rate was derived from (0 = none given)
  double detection_seconds = 0;
  double restart_seconds = 0;
  // Seconds until the hardware taken out is back; kRunMttr = the run's --mttr. 0 for the
  // domains that take nothing out (cluster, job).
  static constexpr double kRunMttr = -1;
  double repair_seconds = kRunMttr;

  // True if an event takes GPUs out of service (domains gpu, node and rack).
  bool TakesHardwareOut() const {
    return domain == FailureDomain::kGpu || domain == FailureDomain::kNode ||
           domain == FailureDomain::kRack;
  }
  // The repair time under a run's MTTR (seconds).
  double RepairSeconds(double mttr_seconds) const {
    return !TakesHardwareOut() ? 0.0 : repair_seconds < 0 ? mttr_seconds : repair_seconds;
  }
};

class FailureCatalog {
 public:
  // The built-in catalog "fleet".
  static const FailureCatalog& Fleet();
  // "fleet" or a path to a JSON file. Throws InputError naming the option for anything else and
  // the file, line and column for a bad document.
  static FailureCatalog Load(const std::string& name_or_path, const std::string& option);
  static FailureCatalog FromJsonText(const std::string& text, const std::string& origin);

  const std::string& name() const { return name_; }
  const std::string& origin() const { return origin_; }  // "fleet" or the file path
  const std::string& source() const { return source_; }
  const std::vector<FailureCause>& causes() const { return causes_; }
  // The index of the cause named `name`, or -1.
  int Find(const std::string& name) const;

 private:
  std::string name_, origin_, source_;
  std::vector<FailureCause> causes_;
};

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_MODELS_FAILURE_CATALOG_H_
