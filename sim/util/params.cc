#include "sim/util/params.h"

#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>

#include "sim/util/error.h"
#include "sim/util/suggest.h"

namespace clustersim {

void Params::AddAssignment(const std::string& assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw InputError("--param " + assignment + ": expected key=value");
  }
  values_[assignment.substr(0, eq)] = assignment.substr(eq + 1);
}

const std::string* Params::Lookup(const std::string& key) const {
  used_.insert(key);
  auto it = values_.find(key);
  return it == values_.end() ? nullptr : &it->second;
}

double Params::Double(const std::string& key, double fallback) const {
  const std::string* v = Lookup(key);
  if (!v) return fallback;
  double out = 0;
  auto [ptr, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
  if (ec != std::errc() || ptr != v->data() + v->size()) {
    throw InputError("parameter " + key + "=" + *v + ": expected a number");
  }
  return out;
}

int Params::Int(const std::string& key, int fallback) const {
  const std::string* v = Lookup(key);
  if (!v) return fallback;
  int out = 0;
  auto [ptr, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
  if (ec != std::errc() || ptr != v->data() + v->size()) {
    throw InputError("parameter " + key + "=" + *v + ": expected an integer");
  }
  return out;
}

bool Params::Bool(const std::string& key, bool fallback) const {
  const std::string* v = Lookup(key);
  if (!v) return fallback;
  if (*v == "true" || *v == "1" || *v == "on" || *v == "yes") return true;
  if (*v == "false" || *v == "0" || *v == "off" || *v == "no") return false;
  throw InputError("parameter " + key + "=" + *v + ": expected true or false");
}

std::string Params::String(const std::string& key, const std::string& fallback) const {
  const std::string* v = Lookup(key);
  return v ? *v : fallback;
}

int Params::Cap(const std::string& key, const std::string& unit) const {
  const double value = Double(key, 0);
  if (!(value >= 0) || value != std::floor(value) || value > 1e9) {
    throw InputError("parameter " + key + "=" + String(key, "") + ": expected a whole number of " +
                     unit + " >= 0 (0 = no cap)");
  }
  return static_cast<int>(value);
}

void Params::RejectUnused(const std::string& owner) const {
  const std::vector<std::string> known(used_.begin(), used_.end());
  std::string unknown;
  std::string suggestions;
  for (const auto& [key, value] : values_) {
    if (used_.count(key)) continue;
    unknown += (unknown.empty() ? "" : ", ") + key;
    if (const std::string near = NearestName(key, known); !near.empty()) {
      suggestions += (suggestions.empty() ? "" : ", ") + key + " -> " + near;
    }
  }
  if (unknown.empty()) return;
  throw InputError(
      "unknown parameter(s) for " + owner + ": " + unknown +
      (suggestions.empty() ? "" : " (did you mean " + suggestions + "?)") +
      (known.empty() ? std::string("; it takes none") : "; it takes: " + JoinNames(known)));
}

// Values that are not UTF-8 (bytes from the command line) are recorded with U+FFFD rather than
// stopping the run.
std::string Params::ToJson() const {
  return nlohmann::json(values_).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace clustersim
