// Tiresias' discretized attained-service queues (docs/policies.md#las), shared by `las` and by
// `priority` with within=las: K queues split at increasing thresholds of attained service in
// GPU-seconds; a job with service s is in queue k = the number of thresholds <= s.
#ifndef CLUSTERSIM_POLICIES_LAS_QUEUES_H_
#define CLUSTERSIM_POLICIES_LAS_QUEUES_H_

#include <algorithm>
#include <string>
#include <vector>

namespace clustersim {

// Tiresias, NSDI'19, §6: two thresholds for three queues.
inline constexpr const char* kDefaultLasThresholds = "3250,7200";  // GPU-seconds

// Parses the `thresholds` parameter: increasing positive GPU-seconds separated by commas.
// Throws InputError naming the parameter.
std::vector<double> ParseThresholds(const std::string& text);

// The queue of a job that has attained `service_gpu_seconds`.
inline int LasQueueOf(const std::vector<double>& thresholds, double service_gpu_seconds) {
  return static_cast<int>(
      std::upper_bound(thresholds.begin(), thresholds.end(), service_gpu_seconds) -
      thresholds.begin());
}

}  // namespace clustersim

#endif  // CLUSTERSIM_POLICIES_LAS_QUEUES_H_
