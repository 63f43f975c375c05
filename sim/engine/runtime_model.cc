#include "sim/engine/runtime_model.h"

#include <algorithm>
#include <cctype>
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
  HardwareRuntime(const Cluster& cluster, const Topology& topology, int reference)
      : cluster_(cluster), topology_(topology) {
    SetReference(reference);
  }
  const char* name() const override { return "hardware"; }
  int reference_type() const override { return reference_type_; }
  void SetReference(int type) override {
    reference_type_ = type;
    reference_ = &cluster_.catalog().gpu(type);
    // Ideal ring: the reference GPU's NVLink per direction, else its PCIe x16 link.
    ideal_ring_gbps_ = IdealRingGbps(*reference_);
  }

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
  int reference_type_ = -1;
  const GpuSpec* reference_ = nullptr;
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
  const std::string prefix = "hardware";
  if (name.compare(0, prefix.size(), prefix) == 0 &&
      (name.size() == prefix.size() || name[prefix.size()] == ':')) {
    CHECK(topology != nullptr, "MakeRuntimeModel: the hardware model needs the topology");
    const HardwareCatalog& catalog = cluster.catalog();
    int reference = -1;
    if (name.size() == prefix.size()) {
      reference = catalog.Require(catalog.reference(), "hardware catalog", "reference");
    } else {
      const std::string type = name.substr(prefix.size() + 1);
      for (size_t t = 0; t < catalog.gpus().size(); ++t) {
        const std::string& candidate = catalog.gpus()[t].name;
        if (candidate.size() == type.size() &&
            std::equal(type.begin(), type.end(), candidate.begin(), [](char a, char b) {
              return std::tolower(static_cast<unsigned char>(a)) ==
                     std::tolower(static_cast<unsigned char>(b));
            })) {
          reference = static_cast<int>(t);
        }
      }
      if (reference < 0) {
        throw InputError("runtime model \"" + name + "\": unknown reference GPU type \"" + type +
                         "\"; valid types: " + catalog.NameList());
      }
    }
    return std::make_unique<HardwareRuntime>(cluster, *topology, reference);
  }
  throw InputError("unknown runtime model \"" + name + "\"" +
                   DidYouMean(name, {"trace", "hardware"}) +
                   "; valid: trace, hardware, hardware:TYPE (a catalog GPU type)");
}

std::string RuntimeModel::Label(const HardwareCatalog& catalog) const {
  const int type = reference_type();
  return type < 0 ? std::string(name()) : std::string(name()) + ":" + catalog.gpu(type).name;
}

std::optional<int> TraceGpuType(const Trace& trace, const HardwareCatalog& catalog) {
  std::optional<uint32_t> named;  // the symbol every job naming a type names
  for (const Job& job : trace.jobs) {
    if (job.gpu_type.empty()) continue;
    if (named && *named != job.gpu_type.id()) return std::nullopt;
    named = job.gpu_type.id();
  }
  if (!named) return std::nullopt;
  for (const Job& job : trace.jobs) {
    if (job.gpu_type.empty()) continue;
    const std::string& types = job.gpu_type.str();
    if (types.find('|') != std::string::npos) return std::nullopt;
    const auto type = catalog.Find(types);
    if (!type) return std::nullopt;
    return *type;
  }
  return std::nullopt;
}

}  // namespace clustersim
