// Runtime models (docs/models.md#runtime-models): how fast a job progresses on a given allocation.
// A job's work is its trace duration in seconds at rate 1; on an allocation it progresses at Rate()
// work-seconds per second, so it finishes after work / rate seconds of running.
//
// - trace: rate 1 everywhere: the job runs exactly its trace duration.
// - hardware: the trace duration is the run time on a reference GPU type with an ideal placement.
//   The reference is a setting ("hardware:TYPE"); "hardware" alone takes the catalog's reference
//   (V100-16GB in the built-in catalog), which a run replaces by the trace's own GPU type where
//   the trace states one (TraceGpuType; docs/models.md#runtime-models). One training iteration takes t_c / speedup(type, family) of compute plus a
//   ring all-reduce of the gradients, T = 2(n-1)/n x bytes / B_ring + 2(n-1) x hop latency
//   (alpha-beta model, docs/models.md#ring-all-reduce), with B_ring from the topology. The ideal
// placement is n
//   reference GPUs on one NVLink (or PCIe) domain. Rate = ideal iteration time / actual.
//   Compute time per iteration and gradient bytes come per model family (ModelFamilyProfile);
//   the model catalog of a later issue refines them per model.
#ifndef CLUSTERSIM_SIM_ENGINE_RUNTIME_MODEL_H_
#define CLUSTERSIM_SIM_ENGINE_RUNTIME_MODEL_H_

#include <memory>
#include <optional>
#include <string>

#include "sim/engine/job.h"
#include "sim/engine/placement.h"
#include "sim/hardware/collectives.h"
#include "sim/hardware/topology.h"
#include "sim/models/model_catalog.h"

namespace clustersim {

class RuntimeModel {
 public:
  virtual ~RuntimeModel() = default;
  virtual const char* name() const = 0;
  // Returns work-seconds per second for `job` on `allocation` (non-empty). Deterministic.
  virtual double Rate(const Job& job, const Allocation& allocation) const = 0;
  // The catalog GPU type trace durations are times on (the hardware model's reference), or -1
  // when every type runs at the trace's pace (trace).
  virtual int reference_type() const { return -1; }
  // Sets the reference GPU type (the hardware model; ignored by trace). REQUIRES: before any
  // Rate, a catalog type.
  virtual void SetReference(int /*type*/) {}
  // The model as a run records it: "trace", or "hardware:TYPE" with its reference.
  std::string Label(const HardwareCatalog& catalog) const;
};

// The GPU type a trace states for its jobs: the one catalog type that every job naming a type
// names, alone (not "A|B"), when at least one job names one; nullopt otherwise (no job names a
// type, they name several, or a name the catalog lacks).
std::optional<int> TraceGpuType(const Trace& trace, const HardwareCatalog& catalog);

// Per model family, the figures the hardware model needs.
struct ModelFamilyProfile {
  const char* family;
  double compute_seconds_per_iteration;  // on the reference GPU type
  double gradient_bytes;                 // all-reduced per iteration
};

const ModelFamilyProfile& ProfileOfFamily(const std::string& family);

// `name`: "trace", "hardware" (the catalog's reference GPU type) or "hardware:TYPE" (a catalog
// GPU type, case-insensitive). Throws InputError listing the valid names (or types) otherwise.
std::unique_ptr<RuntimeModel> MakeRuntimeModel(const std::string& name, const Cluster& cluster,
                                               const Topology& topology);
// The same where `topology` may be nullptr unless `name` is "hardware", the only model that
// reads it (CHECKed).
std::unique_ptr<RuntimeModel> MakeRuntimeModel(const std::string& name, const Cluster& cluster,
                                               const Topology* topology);

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_ENGINE_RUNTIME_MODEL_H_
