// The hardware catalog: one GpuSpec per GPU type, read from JSON. The default catalog
// (sim/data/gpus.json) is compiled into the binary; `--hardware FILE` replaces it. Figures are
// public spec-sheet values; the "source" field of each entry says where they come from.
// The catalog is immutable after loading; GPU types are referred to by their index in it.
#ifndef CLUSTERSIM_SIM_HARDWARE_HARDWARE_H_
#define CLUSTERSIM_SIM_HARDWARE_HARDWARE_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace clustersim {

// Share of a GPU's memory the CUDA allocator can use when the catalog gives no figure: PyTorch
// reports 15.78 GiB of a 16 GiB V100 and 79.35 GiB of an 80 GiB A100 as total capacity (the
// sources are in sim/data/gpus.json).
inline constexpr double kUsableMemoryShare = 0.99;

struct GpuSpec {
  std::string name;         // e.g. "A100-80GB"
  std::string form_factor;  // SXM2, SXM4, SXM5, PCIe
  double memory_gib = 0;
  double fp16_tflops = 0;  // dense FP16/BF16 tensor TFLOP/s
  double fp32_tflops = 0;
  // Dense TF32 tensor TFLOP/s; 0 = the GPU has no TF32 tensor cores (TF32 runs as FP32).
  double tf32_tflops = 0;
  // Memory the CUDA allocator can use, GiB, as PyTorch reports the "total capacity" (the driver
  // keeps the rest); 0 = kUsableMemoryShare x memory_gib.
  double usable_memory_gib = 0;
  // Chip generation ("volta", "ampere", "hopper", ...): the key of the model catalog's measured
  // efficiency tables (sim/models/model_catalog.h); empty = none.
  std::string chip;
  double memory_bandwidth_gbps = 0;  // GB/s
  int nvlink_generation = 0;         // 0 = none
  double nvlink_gbps = 0;            // per-GPU aggregate NVLink bandwidth, GB/s (both directions)
  int pcie_generation = 3;
  double tdp_watts = 0;                   // power drawn by a busy GPU
  double idle_watts = 0;                  // power drawn by an idle GPU
  double price_per_gpu_hour = 0;          // USD
  std::map<std::string, double> speedup;  // model family -> throughput relative to the reference
  std::string source;
  // >= 0: this entry is a copy of catalog type `alias_of` made for the nodes of some site
  // partitions (Cluster, docs/cluster.md#site-model), named "<type>@<partitions>"; -1 otherwise.
  int alias_of = -1;

  // Returns the speedup for `family`, falling back to "other" and then to 1.
  double SpeedupFor(const std::string& family) const;
  // Returns the peak dense TFLOP/s for 16-bit ("mixed"), "tf32" or "fp32" arithmetic.
  double PeakTflops(const std::string& precision_group) const;
  // Returns usable_memory_gib, or kUsableMemoryShare x memory_gib when that is 0.
  double UsableMemoryGib() const;
};

class HardwareCatalog {
 public:
  // The catalog compiled into the binary.
  static const HardwareCatalog& Default();
  // Throws InputError naming the file and the offending entry.
  static HardwareCatalog FromFile(const std::string& path);
  static HardwareCatalog FromJsonText(const std::string& text, const std::string& origin);

  const std::vector<GpuSpec>& gpus() const { return gpus_; }
  const GpuSpec& gpu(int index) const { return gpus_[index]; }
  const std::string& reference() const { return reference_; }
  // Returns the index of `name`, or nullopt.
  std::optional<int> Find(const std::string& name) const;
  // Returns the index of `name` or throws InputError listing the valid names.
  int Require(const std::string& name, const std::string& origin, const std::string& where) const;
  std::string NameList() const;
  // Appends a copy of type `base` named `name` (GpuSpec::alias_of = base); returns its index.
  int AddAlias(int base, const std::string& name);

 private:
  std::vector<GpuSpec> gpus_;
  std::string reference_;
};

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_HARDWARE_HARDWARE_H_
