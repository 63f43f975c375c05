// fastest-type placement: heterogeneity-aware GPU-type choice without batch changes. For each GPU
// type the request allows (catalog order), the first-fit placement restricted to that type; among
// the types that have room, the one on which the run's runtime model predicts the highest rate
// (the `hardware` model: the type's per-family speedup and the placement's all-reduce), skipping,
// in a model-aware run, types on which its user's per-GPU batch does not fit in memory
// (ModelRuntime::Fits; when it fits on none, the types are ranked as if it fit everywhere, and the
// engine's OOM check takes its course). Ties go to the type listed first. Without model
// information or a runtime model that differs by type (`trace`), this is first-fit over types in
// catalog order. A CPU-only job takes the lowest-index node with room for it (PlaceCpuOnly). Cost
// per job: one first-fit query and one rate evaluation per allowed type.
// Parameters: none.
#include "policies/node_placement.h"
#include "policies/registry.h"
#include "sim/engine/job.h"
#include "sim/engine/model_runtime.h"
#include "sim/engine/runtime_model.h"

namespace clustersim {
namespace {

class FastestType final : public Placement {
 public:
  explicit FastestType(const PlacementEnv& env) : env_(env) {}

  bool PlacesCpuOnly() const override { return true; }
  bool Find(const Resources& resources, const PlacementRequest& request,
            Allocation* out) const override {
    // No GPUs, no rate to compare: the lowest-index node with room.
    if (IsCpuOnly(request)) return PlaceCpuOnly(resources, request, NodeRule::kFirstFit, out);
    out->gpus.clear();
    out->gpu_type = -1;
    if (request.gpus <= 0) return false;
    const ModelRuntime* models = env_.models ? *env_.models : nullptr;
    const bool modelled = models != nullptr && request.job_id >= 0 &&
                          models->model(request.job_id) != nullptr &&
                          models->user_batch(request.job_id) > 0;
    const int types = static_cast<int>(env_.cluster->catalog().gpus().size());
    double best_rate = -1;
    bool best_fits = false;
    for (int t = 0; t < types; ++t) {
      if (!request.AllowsType(t) || resources.free_of_type(t) < request.gpus) continue;
      const PlacementRequest one = OnType(request, t);
      Allocation candidate;
      if (!PlaceOnNodes(resources, one, NodeRule::kFirstFit, &candidate)) continue;
      const bool fits =
          !modelled || models->Fits(request.job_id, t, models->user_batch(request.job_id));
      const double rate = env_.runtime != nullptr && request.job != nullptr
                              ? env_.runtime->Rate(*request.job, candidate)
                              : 1.0;
      if (out->gpus.empty() || (fits && !best_fits) || (fits == best_fits && rate > best_rate)) {
        *out = std::move(candidate);
        best_rate = rate;
        best_fits = fits;
      }
    }
    return !out->gpus.empty();
  }

 private:
  PlacementEnv env_;
};

}  // namespace
}  // namespace clustersim

CLUSTERSIM_REGISTER_PLACEMENT(fastest_type, "fastest-type",
                              "the GPU type with the highest predicted rate where the job's batch "
                              "fits in memory, first-fit within it",
                              [](const clustersim::PlacementEnv& env, const clustersim::Params&) {
                                return std::make_unique<clustersim::FastestType>(env);
                              });
