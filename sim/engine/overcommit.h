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
#include <vector>

#include "sim/engine/job.h"

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

// The memory of a job on a shared GPU over its run (docs/overcommit.md#memory-over-time), in
// thousandths of the GPU's memory. A share of `milli` is the job's request: the most it holds (its
// peak). Outside peaks it holds steady_share x milli. Peaks come periodically: a job whose running
// interval began at t0 is in a peak during [t0 + k x period, t0 + k x period + length) for every
// k >= 1 (the first one period after its start), so where peaks coincide follows from the start
// times alone.
struct PeakModel {
  double period_seconds = 600;
  double length_seconds = 60;
  double steady_share = 0.5;
  // Resubmissions of a share that ran out of memory; the next time it does, it ends oom-failed
  // (`--oom-retries`, as for model-aware runs' halved batches).
  int oom_retries = 4;
};

// The running shares of every GPU and when their memory overflows the GPU. Used by the engine
// only when over-commit is on (F > 1): without it the shares on a GPU add up to at most its
// memory, peaks included, and nothing can overflow.
class SharedGpuMemory {
 public:
  SharedGpuMemory(int gpus, PeakModel model) : jobs_(gpus), model_(model) {}
  const PeakModel& model() const { return model_; }
  // A share of `milli` (the request) of job `id` starts on `gpu` at `start`; and leaves it.
  void Add(int gpu, JobId id, int milli, double start);
  void Remove(int gpu, JobId id);
  // The memory the shares on `gpu` hold at time t, in thousandths of the GPU's memory.
  double MemoryAt(int gpu, double t) const;
  // The earliest start of a peak at t >= now (t > now unless `include_now`) at which
  // MemoryAt(gpu, t) > 1000 with the jobs now on it, or +inf if there is none. Memory rises only
  // when a peak begins (the steady levels add up to at most the GPU's memory: F x steady_share <=
  // 1 is required); as every job has the same period, the pattern repeats once every job has had
  // its first peak, and the search ends one period after the latest first peak.
  double NextOverflow(int gpu, double now, bool include_now) const;
  // The jobs that run out of memory at `now` (MemoryAt(gpu, now) > 1000), in the order they are
  // taken off until the rest fits: the job whose peak began last first (a job not in a peak counts
  // from its start), ties by the later start, then the larger job id.
  std::vector<JobId> Victims(int gpu, double now) const;

 private:
  struct Share {
    JobId id;
    int milli;
    double start;
  };
  bool InPeak(const Share& s, double t, double* began) const;
  std::vector<std::vector<Share>> jobs_;  // per GPU, in start order
  PeakModel model_;
};

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_ENGINE_OVERCOMMIT_H_
