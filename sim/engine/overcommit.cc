#include "sim/engine/overcommit.h"

#include <algorithm>
#include <limits>
#include <tuple>

namespace clustersim {

void SharedGpuMemory::Add(int gpu, JobId id, int milli, double start) {
  jobs_[gpu].push_back(Share{id, milli, start});
}

void SharedGpuMemory::Remove(int gpu, JobId id) {
  std::vector<Share>& v = jobs_[gpu];
  v.erase(std::remove_if(v.begin(), v.end(), [id](const Share& s) { return s.id == id; }),
          v.end());
}

bool SharedGpuMemory::InPeak(const Share& s, double t, double* began) const {
  const double since = t - s.start;
  // The first peak is one period in. A tolerance of 1e-9 periods so that a peak's start computed
  // as start + k x period counts as in the peak.
  const double k = std::floor(since / model_.period_seconds + 1e-9);
  if (k < 1) return false;
  const double peak_start = s.start + k * model_.period_seconds;
  if (t - peak_start >= model_.length_seconds) return false;
  *began = peak_start;
  return true;
}

double SharedGpuMemory::MemoryAt(int gpu, double t) const {
  double memory = 0;
  for (const Share& s : jobs_[gpu]) {
    double began = 0;
    memory += InPeak(s, t, &began) ? s.milli : s.milli * model_.steady_share;
  }
  return memory;
}

double SharedGpuMemory::NextOverflow(int gpu, double now, bool include_now) const {
  constexpr double kNever = std::numeric_limits<double>::infinity();
  const std::vector<Share>& v = jobs_[gpu];
  if (v.size() < 2) return kNever;  // a share alone never exceeds its GPU
  const double p = model_.period_seconds;
  double latest_start = now;
  for (const Share& s : v) latest_start = std::max(latest_start, s.start);
  const double end = latest_start + 2 * p;  // the latest first peak, then one whole period
  // Each job's next peak start at or after now (k >= 1); merged in time order.
  std::vector<double> next(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    double k = std::max(1.0, std::ceil((now - v[i].start) / p));
    if (!include_now && v[i].start + k * p <= now) k += 1;
    next[i] = v[i].start + k * p;
  }
  while (true) {
    const double t = *std::min_element(next.begin(), next.end());
    if (t > end) return kNever;
    if (MemoryAt(gpu, t) > 1000) return t;
    for (size_t i = 0; i < v.size(); ++i) {
      if (next[i] == t) next[i] += p;
    }
  }
}

std::vector<JobId> SharedGpuMemory::Victims(int gpu, double now) const {
  // (level began, start, id) of every job, latest first.
  std::vector<std::tuple<double, double, JobId, double>> order;
  for (const Share& s : jobs_[gpu]) {
    double began = s.start;
    const bool peak = InPeak(s, now, &began);
    order.emplace_back(began, s.start, s.id, peak ? s.milli : s.milli * model_.steady_share);
  }
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return std::tie(std::get<0>(a), std::get<1>(a), std::get<2>(a)) >
           std::tie(std::get<0>(b), std::get<1>(b), std::get<2>(b));
  });
  double memory = MemoryAt(gpu, now);
  std::vector<JobId> victims;
  for (const auto& entry : order) {
    if (memory <= 1000) break;
    victims.push_back(std::get<2>(entry));
    memory -= std::get<3>(entry);
  }
  return victims;
}

}  // namespace clustersim
