// Collective communication cost on the hardware: the alpha-beta model of a ring all-reduce and the
// ring bandwidth of an ideal NVLink or PCIe domain. Pure functions of catalog figures; the
// topology graph (sim/hardware/topology.h) gives the bandwidth of a real set of GPUs.
#ifndef CLUSTERSIM_SIM_HARDWARE_COLLECTIVES_H_
#define CLUSTERSIM_SIM_HARDWARE_COLLECTIVES_H_

#include "sim/hardware/hardware.h"

namespace clustersim {

// Ring all-reduce time of `bytes` over n GPUs, alpha-beta model (Thakur et al., "Optimization of
// Collective Communication Operations in MPICH", 2005), seconds:
// 2(n-1)/n x bytes / (ring_gbps x 1e9) + 2(n-1) x hop_seconds; 0 for n < 2.
double RingAllReduceSeconds(int n, double bytes, double ring_gbps, double hop_seconds);

// The ring bandwidth per direction, GB/s, of GPUs of type `gpu` in one ideal NVLink domain (half
// the catalog's bidirectional NVLink figure), or over PCIe x16 of its generation without NVLink
// (15.75 GB/s for gen 3, doubling per generation).
double IdealRingGbps(const GpuSpec& gpu);

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_HARDWARE_COLLECTIVES_H_
