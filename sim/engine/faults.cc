#include "sim/engine/faults.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "sim/util/duration.h"
#include "sim/util/error.h"

namespace clustersim {
namespace {

// A duration > 0 whose plain number is in hours (sim/util/duration.h); returns seconds.
double ParseHours(const std::string& text, const std::string& option) {
  double seconds = 0;
  std::string error;
  if (!TryParseDuration(text, kSecondsPerHour, &seconds, &error) || !(seconds > 0)) {
    throw InputError(option +
                     ": expected a duration > 0 (a number of hours, or with s, min, h "
                     "or d), got \"" +
                     text + "\"");
  }
  return seconds;
}

}  // namespace

bool FaultOptions::failures() const {
  auto any = [](const std::vector<double>& v) {
    for (double x : v) {
      if (x < kNever) return true;
    }
    return false;
  };
  return any(node_mtbf_seconds) || any(gpu_mtbf_seconds) || !trace.empty() ||
         failure_model != nullptr;
}

std::string FaultOptions::ToJson(const HardwareCatalog& catalog) const {
  nlohmann::json j = nlohmann::json::object();
  auto by_type = [&](const std::vector<double>& v) {
    // One figure for every type is written as that figure, in hours.
    if (!v.empty() && v.front() < kNever &&
        std::all_of(v.begin(), v.end(), [&](double x) { return x == v.front(); })) {
      return nlohmann::json(v.front() / 3600);
    }
    nlohmann::json o = nlohmann::json::object();
    for (size_t t = 0; t < v.size(); ++t) {
      if (v[t] < kNever) o[catalog.gpu(static_cast<int>(t)).name] = v[t] / 3600;
    }
    return o;
  };
  if (!by_type(node_mtbf_seconds).empty()) j["node_mtbf_hours"] = by_type(node_mtbf_seconds);
  if (!by_type(gpu_mtbf_seconds).empty()) j["gpu_mtbf_hours"] = by_type(gpu_mtbf_seconds);
  if (failures()) j["mttr_seconds"] = mttr_seconds;
  if (!trace_path.empty()) j["failure_trace"] = trace_path;
  if (failure_model != nullptr) j["failure_model"] = failure_model->origin();
  if (checkpoints()) {
    if (checkpoint_interval_seconds < kNever) {
      j["checkpoint_interval_seconds"] = checkpoint_interval_seconds;
    }
    j["checkpoint_cost_seconds"] = checkpoint_cost_seconds;
  }
  if (checkpoint.rule != CheckpointRule::kFixed) {
    j["checkpoint_policy"] = CheckpointRuleName(checkpoint.rule);
  }
  if (checkpoint.async) {
    j["checkpoint_async"] = {{"blocking", checkpoint.async_blocking},
                             {"slowdown", checkpoint.async_slowdown}};
  }
  if (restore_cost_seconds != 0) j["restore_cost_seconds"] = restore_cost_seconds;
  return j.dump();
}

std::vector<double> ParseMtbfHours(const std::string& text, const HardwareCatalog& catalog,
                                   const std::string& option) {
  std::vector<double> out(catalog.gpus().size(), FaultOptions::kNever);
  if (text.find('=') == std::string::npos) {
    const double seconds = ParseHours(text, option);
    for (double& v : out) v = seconds;
    return out;
  }
  std::stringstream items(text);
  std::string item;
  while (std::getline(items, item, ',')) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw InputError(option + " " + text + ": expected HOURS or TYPE=HOURS[,TYPE=HOURS...]");
    }
    const std::string name = item.substr(0, eq);
    const auto type = catalog.Find(name);
    if (!type) {
      throw InputError(option + ": unknown GPU type \"" + name +
                       "\"; valid types: " + catalog.NameList());
    }
    out[*type] = ParseHours(item.substr(eq + 1), option);
  }
  // A type's copies for site partitions (HardwareCatalog::AddAlias) fail as the type does,
  // unless named themselves.
  for (size_t t = 0; t < out.size(); ++t) {
    const int base = catalog.gpu(static_cast<int>(t)).alias_of;
    if (base >= 0 && out[t] == FaultOptions::kNever) out[t] = out[base];
  }
  return out;
}

double ExponentialSource::Next(double mean) {
  // splitmix64, then 53 bits to a uniform in (0, 1].
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  const double u = static_cast<double>((z >> 11) + 1) * 0x1.0p-53;
  return -mean * std::log(u);
}

}  // namespace clustersim
