#include "sim/engine/allocation_log.h"

namespace clustersim {

const char* IntervalEndName(IntervalEnd why) {
  switch (why) {
    case IntervalEnd::kFinish:
      return "finish";
    case IntervalEnd::kPreempt:
      return "preempt";
    case IntervalEnd::kFailure:
      return "failure";
    case IntervalEnd::kResize:
      return "resize";
    case IntervalEnd::kMigrate:
      return "migrate";
    case IntervalEnd::kOom:
      return "oom";
    case IntervalEnd::kTimeout:
      return "timeout";
    case IntervalEnd::kRunEnd:
      return "run-end";
  }
  return "?";
}

double AllocationLog::GpuSeconds() const {
  double total = 0;
  for (const AllocationInterval& interval : intervals) total += interval.gpu_seconds();
  return total;
}

std::string IndexRanges(std::span<const int32_t> indices) {
  std::string out;
  size_t i = 0;
  while (i < indices.size()) {
    size_t j = i;
    while (j + 1 < indices.size() && indices[j + 1] == indices[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(indices[i]);
    if (j > i) out += '-' + std::to_string(indices[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace clustersim
