// Policy and placement parameters: `--param key=value` (repeatable) or a run config's "params"
// object. Values are strings parsed on use; a key nobody reads is an error (a typo must not be
// silently ignored), reported by RejectUnused.
#ifndef CLUSTERSIM_SIM_UTIL_PARAMS_H_
#define CLUSTERSIM_SIM_UTIL_PARAMS_H_

#include <map>
#include <set>
#include <string>

namespace clustersim {

class Params {
 public:
  Params() = default;
  explicit Params(std::map<std::string, std::string> values) : values_(std::move(values)) {}
  // Parses "key=value"; throws InputError if there is no '='.
  void AddAssignment(const std::string& assignment);

  // Each returns the value of `key` or `fallback`; throws InputError naming the key when the
  // value does not parse.
  double Double(const std::string& key, double fallback) const;
  int Int(const std::string& key, int fallback) const;
  bool Bool(const std::string& key, bool fallback) const;
  std::string String(const std::string& key, const std::string& fallback) const;
  // A cap on a count of `unit` (e.g. "jobs"): a whole number from 0 to 10^9, 0 = no cap (also
  // when the key is not given); throws InputError naming the key and the unit otherwise.
  int Cap(const std::string& key, const std::string& unit) const;

  // Throws InputError listing keys that no Double/Int/Bool/String call asked for.
  void RejectUnused(const std::string& owner) const;
  const std::map<std::string, std::string>& values() const { return values_; }
  std::string ToJson() const;

 private:
  const std::string* Lookup(const std::string& key) const;
  std::map<std::string, std::string> values_;
  mutable std::set<std::string> used_;
};

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_UTIL_PARAMS_H_
