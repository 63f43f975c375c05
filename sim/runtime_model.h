// Runtime models (DESIGN.md §4): how fast a job progresses on a given allocation. A job's work is
// its trace duration in seconds at rate 1; on an allocation it progresses at Rate() work-seconds
// per second, so it finishes after work / rate seconds of running.
//
// - trace: rate 1 everywhere: the job runs exactly its trace duration.
// - hardware: the trace duration is the run time on the catalog's reference GPU type with an
//   ideal placement. One training iteration takes t_c / speedup(type, family) of compute plus a
//   ring all-reduce of the gradients, T = 2(n-1)/n x bytes / B_ring + 2(n-1) x hop latency
//   (alpha-beta model, seed 001 §3.5.3), with B_ring from the topology. The ideal placement is n
//   reference GPUs on one NVLink (or PCIe) domain. Rate = ideal iteration time / actual.
//   Compute time per iteration and gradient bytes come per model family (ModelFamilyProfile);
//   the model catalog of a later issue refines them per model.
#ifndef CLUSTERSIM_SIM_RUNTIME_MODEL_H_
#define CLUSTERSIM_SIM_RUNTIME_MODEL_H_

#include <memory>
#include <string>

#include "sim/job.h"
#include "sim/placement.h"
#include "sim/topology.h"

namespace clustersim {

class RuntimeModel {
 public:
  virtual ~RuntimeModel() = default;
  virtual const char* name() const = 0;
  // Returns work-seconds per second for `job` on `allocation` (non-empty). Deterministic.
  virtual double Rate(const Job& job, const Allocation& allocation) const = 0;
};

// Per model family, the figures the hardware model needs.
struct ModelFamilyProfile {
  const char* family;
  double compute_seconds_per_iteration;  // on the reference GPU type
  double gradient_bytes;                 // all-reduced per iteration
};

// Returns "cnn", "transformer" or "other" from a model name (case-insensitive substrings:
// resnet/vgg/inception/cnn/efficientnet -> cnn; bert/gpt/llama/transformer/vit/t5 -> transformer).
std::string ModelFamilyOf(const std::string& model);
const ModelFamilyProfile& ProfileOfFamily(const std::string& family);

// Ring all-reduce time of `bytes` over n GPUs, alpha-beta model (seed 001 §3.5.3), seconds:
// 2(n-1)/n x bytes / (ring_gbps x 1e9) + 2(n-1) x hop_seconds; 0 for n < 2.
double RingAllReduceSeconds(int n, double bytes, double ring_gbps, double hop_seconds);

// The ring bandwidth per direction, GB/s, of GPUs of type `gpu` in one ideal NVLink domain (half
// the catalog's bidirectional NVLink figure), or over PCIe x16 of its generation without NVLink
// (15.75 GB/s for gen 3, doubling per generation).
double IdealRingGbps(const GpuSpec& gpu);

// `name`: "trace" or "hardware". Throws InputError listing the valid names otherwise.
std::unique_ptr<RuntimeModel> MakeRuntimeModel(const std::string& name, const Cluster& cluster,
                                               const Topology& topology);

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_RUNTIME_MODEL_H_
