// `--autoscaler none` (the default; docs/autoscaling.md): no autoscaler, so every node pool
// keeps its start size (`count`) for the whole run and no scan is ever scheduled.
#include "policies/registry.h"

CLUSTERSIM_REGISTER_AUTOSCALER(none, "none", "pools stay at their start size (count)",
                               [](const clustersim::Params&) {
                                 return std::unique_ptr<clustersim::Autoscaler>();
                               });
