#include "sim/engine/runtime_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "sim/util/error.h"
#include "sim/util/suggest.h"

namespace clustersim {
namespace {

// Per-family defaults (documented in ARCHITECTURE.md): ResNet-50 (25.6M FP32 gradients, about
// 0.2 s per iteration at batch 256 on a V100), BERT-large (340M parameters, FP16 gradients,
// about 0.4 s per iteration), and a middle value for unknown models.
constexpr ModelFamilyProfile kProfiles[] = {
    {"cnn", 0.20, 25.6e6 * 4},
    {"transformer", 0.40, 340e6 * 2},
    {"other", 0.30, 100e6 * 4},
};

class TraceRuntime final : public RuntimeModel {
 public:
  const char* name() const override { return "trace"; }
  double Rate(const Job&, const Allocation&) const override { return 1.0; }
};

class HardwareRuntime final : public RuntimeModel {
 public:
  HardwareRuntime(const Cluster& cluster, const Topology& topology)
      : cluster_(cluster), topology_(topology) {
    const HardwareCatalog& catalog = cluster.catalog();
    reference_ =
        &catalog.gpu(catalog.Require(catalog.reference(), "hardware catalog", "reference"));
    // Ideal ring: the reference GPU's NVLink per direction, else its PCIe x16 link.
    ideal_ring_gbps_ = IdealRingGbps(*reference_);
  }
  const char* name() const override { return "hardware"; }

  double Rate(const Job& job, const Allocation& allocation) const override {
    const std::string family = ModelFamilyOf(job.model.str());
    const ModelFamilyProfile& profile = ProfileOfFamily(family);
    const GpuSpec& gpu = cluster_.catalog().gpu(allocation.gpu_type);
    const int n = static_cast<int>(allocation.gpus.size());
    const double speedup = gpu.SpeedupFor(family) / reference_->SpeedupFor(family);
    const double ideal =
        profile.compute_seconds_per_iteration +
        RingAllReduceSeconds(n, profile.gradient_bytes, ideal_ring_gbps_, kIdealHopSeconds);
    const double actual =
        profile.compute_seconds_per_iteration / speedup +
        (n < 2 ? 0.0
               : RingAllReduceSeconds(n, profile.gradient_bytes,
                                      topology_.RingBandwidthGbps(allocation.gpus),
                                      topology_.RingHopLatencySeconds(allocation.gpus)));
    return ideal / actual;
  }

 private:
  static constexpr double kIdealHopSeconds = 2e-6;

  const Cluster& cluster_;
  const Topology& topology_;
  const GpuSpec* reference_;
  double ideal_ring_gbps_;
};

}  // namespace

const ModelFamilyProfile& ProfileOfFamily(const std::string& family) {
  for (const auto& p : kProfiles) {
    if (family == p.family) return p;
  }
  return kProfiles[2];
}

std::unique_ptr<RuntimeModel> MakeRuntimeModel(const std::string& name, const Cluster& cluster,
                                               const Topology& topology) {
  return MakeRuntimeModel(name, cluster, &topology);
}

std::unique_ptr<RuntimeModel> MakeRuntimeModel(const std::string& name, const Cluster& cluster,
                                               const Topology* topology) {
  if (name == "trace") return std::make_unique<TraceRuntime>();
  if (name == "hardware") {
    CHECK(topology != nullptr, "MakeRuntimeModel: the hardware model needs the topology");
    return std::make_unique<HardwareRuntime>(cluster, *topology);
  }
  throw InputError("unknown runtime model \"" + name + "\"" +
                   DidYouMean(name, {"trace", "hardware"}) + "; valid: trace, hardware");
}

}  // namespace clustersim
