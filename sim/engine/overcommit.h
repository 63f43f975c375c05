// GPU memory over-commit (docs/overcommit.md): with `--param overcommit=F` (F > 1) shared GPUs
// admit jobs by their predicted memory up to F x the GPU's memory. A share of `milli` thousandths
// (openb's gpu_milli: the job's predicted memory as a fraction of the GPU's) then reserves
// ceil(milli / F) thousandths of the GPU in the engine's resource accounting, so that the shares
// on one GPU add up to at most F x 1000 of requested memory while every placement, policy and
// --check keeps reading the usual 0..1000 thousandths. F = 1 reserves the share itself: the
// behaviour without over-commit.
#ifndef CLUSTERSIM_SIM_ENGINE_OVERCOMMIT_H_
#define CLUSTERSIM_SIM_ENGINE_OVERCOMMIT_H_

#include <cmath>

namespace clustersim {

// The accepted range of F: 1 (no over-commit, the default) to 4. More than 4 is refused as a
// likely typo (150 for 1.5): it would give a job a quarter of its share.
inline constexpr double kMinOvercommit = 1.0;
inline constexpr double kMaxOvercommit = 4.0;

// The thousandths a share of `milli` (1..999) reserves under over-commit `factor`
// (kMinOvercommit..kMaxOvercommit): ceil(milli / factor), at least 1. The quotient is taken
// with a tolerance of 1e-9 so that exact quotients (600 / 1.5 = 400) are not rounded up.
inline int ReservedMilli(int milli, double factor) {
  if (factor <= 1.0) return milli;
  const double quotient = static_cast<double>(milli) / factor;  // in (0, 999]: safe to convert
  const int reserved = static_cast<int>(std::ceil(quotient - 1e-9));
  return reserved < 1 ? 1 : reserved;
}

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_ENGINE_OVERCOMMIT_H_
