// GPU model names of the Alibaba 2023 openb traces (cluster-trace-gpu-v2023) and the names
// clustersim uses for them, shared by the pod-list reader (openb.cc, `gpu_spec`) and anything that
// turns the node list (`model`) into a cluster, so both sides of a run agree on the names.
// Models with a catalog entry (sim/data/gpus.json) map to it. G2 and G3 are anonymized models with
// no public specification, so they have none: they keep their openb names; with the default
// catalog a pod restricted to them stops the run with the engine's "unknown GPU type" error naming
// its line, unless a catalog that defines them is given (--hardware) or they are mapped to a
// catalog type (--map-gpu G2=...) or the pods are filtered first.
#ifndef CLUSTERSIM_WORKLOADS_OPENB_MODELS_H_
#define CLUSTERSIM_WORKLOADS_OPENB_MODELS_H_

#include <string_view>

namespace clustersim {

struct OpenbModel {
  std::string_view openb;   // as in the trace
  std::string_view name;    // clustersim's name
  bool in_default_catalog;  // whether sim/data/gpus.json has `name`
};

// Every model named in the openb node and pod lists.
inline constexpr OpenbModel kOpenbModels[] = {
    {"V100M16", "V100-16GB", true},  // V100 16 GB
    {"V100M32", "V100-32GB", true},  // V100 32 GB
    {"P100", "P100-16GB", true},
    {"T4", "T4-16GB", true},
    {"A10", "A10", true},
    {"G2", "G2", false},  // anonymized model
    {"G3", "G3", false},  // anonymized model
};

// Returns the model's entry, or nullptr if `openb_name` is not an openb model.
inline const OpenbModel* FindOpenbModel(std::string_view openb_name) {
  for (const OpenbModel& m : kOpenbModels) {
    if (m.openb == openb_name) return &m;
  }
  return nullptr;
}

}  // namespace clustersim

#endif  // CLUSTERSIM_WORKLOADS_OPENB_MODELS_H_
