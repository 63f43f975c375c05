// The allocation log: one record per running interval of a job, from the start that gave it GPUs
// to the event that took them back (finish, preemption, failure, resize, out-of-memory, wall-time
// kill, or the end of the run). The engine owns it and appends to it when
// EngineOptions::record_allocations is set; the SQLite writer turns it into the `allocations`
// table (results/README.md).
//
// Invariants (checked by the engine under --check): there is one interval per start, so at the end
// of a run the log holds exactly Engine::starts() intervals; the intervals' GPU-seconds (GPUs x
// share x length) add up to the jobs' GPU-seconds, which add up to the metrics' busy GPU-seconds.
// Intervals are appended when they end, so they are in order of their end (ties in event order).
#ifndef CLUSTERSIM_SIM_ENGINE_ALLOCATION_LOG_H_
#define CLUSTERSIM_SIM_ENGINE_ALLOCATION_LOG_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "sim/engine/job.h"

namespace clustersim {

// Why a running interval ended.
enum class IntervalEnd : uint8_t {
  kFinish,   // the job completed
  kPreempt,  // a policy preempted it (it went back to the queue)
  kFailure,  // a failure of one of its GPUs or nodes (back to the queue at its last checkpoint)
  kResize,   // a policy moved it to another allocation (the next interval starts at once)
  kMigrate,  // the defragmenter moved it to as many other GPUs (docs/defragmentation.md)
  kOom,      // its start ran out of GPU memory (model-aware runs)
  kTimeout,  // killed at its requested wall time
  kRunEnd,   // still running when the run stopped (end of trace with --stop-time, or Ctrl-C)
};
// "finish", "preempt", "failure", "resize", "migrate", "oom", "timeout", "run-end".
const char* IntervalEndName(IntervalEnd why);

struct AllocationInterval {
  double start = 0;  // seconds
  double end = 0;
  uint64_t gpu_offset = 0;  // its GPUs: AllocationLog::gpus[gpu_offset, + gpu_count)
  JobId job = kNoJob;
  uint32_t gpu_count = 0;
  int16_t gpu_type = -1;  // catalog index
  uint16_t milli = 0;     // share of each GPU in thousandths; 0 = whole GPUs
  IntervalEnd why = IntervalEnd::kFinish;

  // GPUs held as a busy count (a share counts its fraction), as Metrics counts them.
  double held_gpus() const { return gpu_count * (milli > 0 ? milli / 1000.0 : 1.0); }
  double gpu_seconds() const { return (end - start) * held_gpus(); }
};

struct AllocationLog {
  std::vector<AllocationInterval> intervals;
  std::vector<int32_t> gpus;  // global GPU indices of every interval, ascending per interval

  std::span<const int32_t> GpusOf(const AllocationInterval& interval) const {
    return {gpus.data() + interval.gpu_offset, interval.gpu_count};
  }
  // Sum of the intervals' GPU-seconds.
  double GpuSeconds() const;
};

// Ascending indices as ranges: {0,1,2,3,8,10,11} -> "0-3,8,10-11"; empty -> "".
// REQUIRES: `indices` ascending.
std::string IndexRanges(std::span<const int32_t> indices);

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_ENGINE_ALLOCATION_LOG_H_
