#include "sim/hardware/hardware.h"

#include <cmath>

#include "sim/hardware/gpus_json.h"  // generated from sim/data/gpus.json: kDefaultGpusJson
#include "sim/util/error.h"
#include "sim/util/json_file.h"

namespace clustersim {

double GpuSpec::SpeedupFor(const std::string& family) const {
  if (auto it = speedup.find(family); it != speedup.end()) return it->second;
  if (auto it = speedup.find("other"); it != speedup.end()) return it->second;
  return 1.0;
}

double GpuSpec::PeakTflops(const std::string& precision_group) const {
  if (precision_group == "mixed") return fp16_tflops;
  if (precision_group == "tf32" && tf32_tflops > 0) return tf32_tflops;
  return fp32_tflops;
}

double GpuSpec::UsableMemoryGib() const {
  return usable_memory_gib > 0 ? usable_memory_gib : kUsableMemoryShare * memory_gib;
}

const HardwareCatalog& HardwareCatalog::Default() {
  static const HardwareCatalog catalog = FromJsonText(kDefaultGpusJson, "<built-in gpus.json>");
  return catalog;
}

HardwareCatalog HardwareCatalog::FromFile(const std::string& path) {
  return FromJsonText(ReadFileText(path), path);
}

HardwareCatalog HardwareCatalog::FromJsonText(const std::string& text,
                                              const std::string& origin) try {
  const nlohmann::json doc = ParseJsonText(text, origin);
  HardwareCatalog catalog;
  const auto& gpus = RequireMember(doc, "gpus", origin, "catalog");
  if (!gpus.is_array() || gpus.empty()) {
    throw JsonValueError::Verbatim(origin, "gpus", "\"gpus\": expected a non-empty array");
  }
  for (size_t i = 0; i < gpus.size(); ++i) {
    const auto& g = gpus[i];
    const std::string where = "gpus[" + std::to_string(i) + "]";
    GpuSpec spec;
    spec.name = RequireString(RequireMember(g, "name", origin, where), origin, where + ".name");
    auto number = [&](const char* key) {
      return RequireNumber(RequireMember(g, key, origin, where), origin, where + "." + key);
    };
    auto non_negative = [&](const char* key) {
      const double v = number(key);
      if (v < 0) {
        throw JsonValueError(origin, where + "." + key,
                             "expected a number >= 0, got " + g[key].dump());
      }
      return v;
    };
    auto integer = [&](const char* key, int min, int max) {
      const double v = number(key);
      if (v != std::floor(v) || v < min || v > max) {
        throw JsonValueError(origin, where + "." + key,
                             "expected an integer in [" + std::to_string(min) + ", " +
                                 std::to_string(max) + "], got " + g[key].dump());
      }
      return static_cast<int>(v);
    };
    spec.memory_gib = number("memory_gib");
    spec.fp16_tflops = number("fp16_tflops");
    spec.fp32_tflops = non_negative("fp32_tflops");
    spec.memory_bandwidth_gbps = non_negative("memory_bandwidth_gbps");
    spec.nvlink_generation = integer("nvlink_generation", 0, 10);  // 0 = none
    spec.nvlink_gbps = non_negative("nvlink_gbps");
    spec.pcie_generation =
        integer("pcie_generation", 1, 5);  // those sim/hardware/topology.cc knows
    spec.tdp_watts = number("tdp_watts");
    spec.idle_watts = number("idle_watts");
    spec.price_per_gpu_hour = number("price_per_gpu_hour");
    if (spec.memory_gib <= 0 || spec.tdp_watts <= 0 || spec.idle_watts < 0 ||
        spec.price_per_gpu_hour < 0 || spec.fp16_tflops <= 0) {
      throw JsonValueError(origin, where,
                           "memory_gib, fp16_tflops and tdp_watts must be positive, "
                           "idle_watts and price_per_gpu_hour non-negative");
    }
    if (g.contains("tf32_tflops")) spec.tf32_tflops = non_negative("tf32_tflops");
    if (g.contains("usable_memory_gib")) {
      spec.usable_memory_gib = non_negative("usable_memory_gib");
      if (spec.usable_memory_gib > spec.memory_gib) {
        throw InputError(origin, 0, 0, where + ".usable_memory_gib: must not exceed memory_gib");
      }
    }
    if (g.contains("chip")) spec.chip = RequireString(g["chip"], origin, where + ".chip");
    if (g.contains("form_factor")) {
      spec.form_factor = RequireString(g["form_factor"], origin, where + ".form_factor");
    }
    if (g.contains("source")) spec.source = RequireString(g["source"], origin, where + ".source");
    if (g.contains("speedup")) {
      if (!g["speedup"].is_object()) {
        throw JsonValueError(origin, where + ".speedup", "expected an object");
      }
      for (const auto& [family, value] : g["speedup"].items()) {
        const double s = RequireNumber(value, origin, where + ".speedup." + family);
        if (s <= 0) throw JsonValueError(origin, where + ".speedup." + family, "must be > 0");
        spec.speedup[family] = s;
      }
    }
    if (catalog.Find(spec.name)) {
      throw JsonValueError(origin, where, "duplicate GPU type \"" + spec.name + "\"");
    }
    catalog.gpus_.push_back(std::move(spec));
  }
  catalog.reference_ = catalog.gpus_.front().name;
  if (doc.contains("reference")) {
    catalog.reference_ = RequireString(doc["reference"], origin, "reference");
    catalog.Require(catalog.reference_, origin, "reference");
  }
  return catalog;
} catch (const JsonValueError& e) {
  throw AtJsonPosition(e, origin, text);
}

int HardwareCatalog::AddAlias(int base, const std::string& name) {
  GpuSpec copy = gpus_.at(base);
  copy.name = name;
  copy.alias_of = base;
  gpus_.push_back(std::move(copy));
  return static_cast<int>(gpus_.size()) - 1;
}

std::optional<int> HardwareCatalog::Find(const std::string& name) const {
  for (size_t i = 0; i < gpus_.size(); ++i) {
    if (gpus_[i].name == name) return static_cast<int>(i);
  }
  return std::nullopt;
}

int HardwareCatalog::Require(const std::string& name, const std::string& origin,
                             const std::string& where) const {
  if (auto index = Find(name)) return *index;
  throw JsonValueError(origin, where,
                       "unknown GPU type \"" + name + "\"; valid types: " + NameList());
}

std::string HardwareCatalog::NameList() const {
  std::string out;
  for (const auto& g : gpus_) out += (out.empty() ? "" : ", ") + g.name;
  return out;
}

}  // namespace clustersim
