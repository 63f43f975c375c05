#include "sim/hardware/collectives.h"

#include <cmath>

namespace clustersim {

double RingAllReduceSeconds(int n, double bytes, double ring_gbps, double hop_seconds) {
  if (n < 2) return 0.0;
  return 2.0 * (n - 1) / n * bytes / (ring_gbps * 1e9) + 2.0 * (n - 1) * hop_seconds;
}

double IdealRingGbps(const GpuSpec& gpu) {
  return gpu.nvlink_gbps > 0 ? gpu.nvlink_gbps / 2 : 15.75 * std::pow(2.0, gpu.pcie_generation - 3);
}

}  // namespace clustersim
