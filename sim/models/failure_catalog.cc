#include "sim/models/failure_catalog.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "sim/models/failures_json.h"  // generated from sim/data/failures.json: kDefaultFailuresJson
#include "sim/util/error.h"
#include "sim/util/json_file.h"
#include "sim/util/suggest.h"

namespace clustersim {
namespace {

// "unknown key "x"; did you mean "y"? (expected: a, b, c)" over `known`.
std::string UnknownName(const std::string& what, const std::string& given,
                        const std::vector<std::string>& known) {
  return "unknown " + what + " \"" + given + "\"" + DidYouMean(given, known) +
         " (expected: " + JoinNames(known) + ")";
}

void CheckKeys(const nlohmann::json& object, const std::vector<std::string>& known,
               const std::string& origin, const std::string& where) {
  for (const auto& [key, value] : object.items()) {
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      throw JsonValueError(origin, where.empty() ? key : where + "." + key,
                           UnknownName("key", key, known));
    }
  }
}

double NonNegativeSeconds(const nlohmann::json& value, const std::string& origin,
                          const std::string& where) {
  const double s = RequireDuration(value, origin, where);
  if (!(s >= 0) || !std::isfinite(s)) {
    throw JsonValueError(origin, where, "expected a duration >= 0");
  }
  return s;
}

// "mttr" (the run's --mttr) or a duration.
double RepairSeconds(const nlohmann::json& value, const std::string& origin,
                     const std::string& where) {
  if (value.is_string() && value.get<std::string>() == "mttr") return FailureCause::kRunMttr;
  return NonNegativeSeconds(value, origin, where);
}

}  // namespace

const char* FailureUnitName(FailureUnit unit) {
  switch (unit) {
    case FailureUnit::kGpu:
      return "gpu";
    case FailureUnit::kNode:
      return "node";
    case FailureUnit::kCluster:
      return "cluster";
  }
  return "?";
}

const char* FailureDomainName(FailureDomain domain) {
  switch (domain) {
    case FailureDomain::kGpu:
      return "gpu";
    case FailureDomain::kNode:
      return "node";
    case FailureDomain::kRack:
      return "rack";
    case FailureDomain::kCluster:
      return "cluster";
    case FailureDomain::kJob:
      return "job";
  }
  return "?";
}

const FailureCatalog& FailureCatalog::Fleet() {
  static const FailureCatalog catalog = [] {
    FailureCatalog c = FromJsonText(kDefaultFailuresJson, "<built-in failures.json>");
    c.origin_ = "fleet";
    return c;
  }();
  return catalog;
}

FailureCatalog FailureCatalog::Load(const std::string& name_or_path, const std::string& option) {
  if (name_or_path == "fleet") return Fleet();
  if (name_or_path.find(".json") == std::string::npos &&
      name_or_path.find('/') == std::string::npos) {
    throw InputError(option + ": " + UnknownName("failure model", name_or_path, {"fleet"}) +
                     ", or a JSON file of the same form (docs/reliability.md)");
  }
  return FromJsonText(ReadFileText(name_or_path), name_or_path);
}

FailureCatalog FailureCatalog::FromJsonText(const std::string& text,
                                            const std::string& origin) try {
  const nlohmann::json doc = ParseJsonText(text, origin);
  if (!doc.is_object()) throw JsonValueError(origin, "", "expected an object");
  CheckKeys(doc, {"_comment", "name", "source", "defaults", "exposure", "causes"}, origin, "");
  FailureCatalog catalog;
  catalog.origin_ = origin;
  catalog.name_ = RequireString(RequireMember(doc, "name", origin, ""), origin, "name");
  if (doc.contains("source")) catalog.source_ = RequireString(doc["source"], origin, "source");
  double detection = 0;
  double restart = 0;
  double repair = FailureCause::kRunMttr;
  if (doc.contains("defaults")) {
    const auto& d = doc["defaults"];
    if (!d.is_object()) throw JsonValueError(origin, "defaults", "expected an object");
    CheckKeys(d, {"detection_seconds", "restart_seconds", "repair"}, origin, "defaults");
    if (d.contains("detection_seconds")) {
      detection = NonNegativeSeconds(d["detection_seconds"], origin, "defaults.detection_seconds");
    }
    if (d.contains("restart_seconds")) {
      restart = NonNegativeSeconds(d["restart_seconds"], origin, "defaults.restart_seconds");
    }
    if (d.contains("repair")) repair = RepairSeconds(d["repair"], origin, "defaults.repair");
  }
  // Exposure per unit, for causes given as event counts.
  double exposure[3] = {0, 0, 0};  // by FailureUnit
  if (doc.contains("exposure")) {
    const auto& e = doc["exposure"];
    if (!e.is_object()) throw JsonValueError(origin, "exposure", "expected an object");
    CheckKeys(e, {"gpu_hours", "node_hours", "cluster_hours"}, origin, "exposure");
    const char* keys[3] = {"gpu_hours", "node_hours", "cluster_hours"};
    for (int u = 0; u < 3; ++u) {
      if (!e.contains(keys[u])) continue;
      const std::string where = std::string("exposure.") + keys[u];
      exposure[u] = RequireNumber(e[keys[u]], origin, where);
      if (!(exposure[u] > 0) || !std::isfinite(exposure[u])) {
        throw JsonValueError(origin, where, "expected a number of hours > 0");
      }
    }
  }
  const auto& causes = RequireMember(doc, "causes", origin, "");
  if (!causes.is_array() || causes.empty()) {
    throw JsonValueError(origin, "causes", "expected a non-empty array of causes");
  }
  for (size_t i = 0; i < causes.size(); ++i) {
    const auto& c = causes[i];
    const std::string where = "causes[" + std::to_string(i) + "]";
    if (!c.is_object()) throw JsonValueError(origin, where, "expected an object");
    CheckKeys(c,
              {"name", "component", "per", "domain", "events", "rate_per_hour", "detection_seconds",
               "restart_seconds", "repair", "source"},
              origin, where);
    FailureCause cause;
    cause.name = RequireString(RequireMember(c, "name", origin, where), origin, where + ".name");
    if (cause.name.empty()) throw JsonValueError(origin, where + ".name", "expected a name");
    if (catalog.Find(cause.name) >= 0) {
      throw JsonValueError(origin, where + ".name", "duplicate cause \"" + cause.name + "\"");
    }
    if (c.contains("component")) {
      cause.component = RequireString(c["component"], origin, where + ".component");
    }
    const std::string per =
        RequireString(RequireMember(c, "per", origin, where), origin, where + ".per");
    if (per == "gpu") {
      cause.per = FailureUnit::kGpu;
    } else if (per == "node") {
      cause.per = FailureUnit::kNode;
    } else if (per == "cluster") {
      cause.per = FailureUnit::kCluster;
    } else {
      throw JsonValueError(origin, where + ".per",
                           UnknownName("unit", per, {"gpu", "node", "cluster"}));
    }
    const std::string domain =
        RequireString(RequireMember(c, "domain", origin, where), origin, where + ".domain");
    const std::vector<std::string> domains = {"gpu", "node", "rack", "cluster", "job"};
    const auto d = std::find(domains.begin(), domains.end(), domain);
    if (d == domains.end()) {
      throw JsonValueError(origin, where + ".domain", UnknownName("domain", domain, domains));
    }
    cause.domain = static_cast<FailureDomain>(d - domains.begin());
    // A GPU-sized domain needs a GPU to strike; a job-domain event hits the job on its unit, so
    // its unit must be one a job holds.
    if (cause.domain == FailureDomain::kGpu && cause.per != FailureUnit::kGpu) {
      throw JsonValueError(origin, where + ".domain", "domain gpu needs per gpu");
    }
    if (cause.domain != FailureDomain::kCluster && cause.per == FailureUnit::kCluster) {
      throw JsonValueError(origin, where + ".per",
                           "per cluster needs domain cluster (a cluster-wide event strikes no "
                           "GPU or node of its own)");
    }
    const bool has_events = c.contains("events");
    const bool has_rate = c.contains("rate_per_hour");
    if (has_events == has_rate) {
      throw JsonValueError(origin, where,
                           "expected exactly one of \"events\" (with the exposure of its unit) "
                           "and \"rate_per_hour\"");
    }
    if (has_rate) {
      cause.rate_per_unit_hour =
          RequireNumber(c["rate_per_hour"], origin, where + ".rate_per_hour");
    } else {
      cause.events = RequireNumber(c["events"], origin, where + ".events");
      const double hours = exposure[static_cast<int>(cause.per)];
      if (!(hours > 0)) {
        throw JsonValueError(origin, where + ".events",
                             std::string("events need exposure.") + FailureUnitName(cause.per) +
                                 "_hours (the unit-hours they were counted over)");
      }
      if (!(cause.events > 0)) {
        throw JsonValueError(origin, where + ".events", "expected a count > 0");
      }
      cause.rate_per_unit_hour = cause.events / hours;
    }
    if (!(cause.rate_per_unit_hour > 0) || !std::isfinite(cause.rate_per_unit_hour)) {
      throw JsonValueError(origin, where + ".rate_per_hour", "expected a rate > 0");
    }
    cause.detection_seconds =
        c.contains("detection_seconds")
            ? NonNegativeSeconds(c["detection_seconds"], origin, where + ".detection_seconds")
            : detection;
    cause.restart_seconds =
        c.contains("restart_seconds")
            ? NonNegativeSeconds(c["restart_seconds"], origin, where + ".restart_seconds")
            : restart;
    cause.repair_seconds =
        c.contains("repair") ? RepairSeconds(c["repair"], origin, where + ".repair") : repair;
    if (!cause.TakesHardwareOut()) cause.repair_seconds = 0;
    catalog.causes_.push_back(std::move(cause));
  }
  return catalog;
} catch (const JsonValueError& e) {
  throw AtJsonPosition(e, origin, text);
}

int FailureCatalog::Find(const std::string& name) const {
  for (size_t i = 0; i < causes_.size(); ++i) {
    if (causes_[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace clustersim
