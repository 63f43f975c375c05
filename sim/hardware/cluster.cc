#include "sim/hardware/cluster.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "sim/hardware/mig.h"
#include "sim/util/csv.h"
#include "sim/util/error.h"
#include "sim/util/input_file.h"
#include "sim/util/json_file.h"
#include "sim/util/suggest.h"

namespace clustersim {
namespace {

// Built-in presets. NIC figures: DGX-1 has 4x 100 Gb/s EDR InfiniBand, DGX A100 8x 200 Gb/s
// HDR, DGX H100 8x 400 Gb/s NDR (NVIDIA DGX datasheets). Sizes are 16 nodes unless named.
const std::map<std::string, std::string>& Presets() {
  static const std::map<std::string, std::string> presets = {
      {"dgx1-v100",
       R"({"nodes":[{"count":16,"gpu_type":"V100-32GB","gpus_per_node":8,"topology":"hybrid-cube-mesh",
           "cpus":40,"host_memory_gib":512,"nic_gbps":400}],"network":{"nodes_per_rack":8}})"},
      {"dgx-a100",
       R"({"nodes":[{"count":16,"gpu_type":"A100-80GB","gpus_per_node":8,"topology":"nvswitch",
           "cpus":128,"host_memory_gib":2048,"nic_gbps":1600}],"network":{"nodes_per_rack":8}})"},
      {"dgx-h100",
       R"({"nodes":[{"count":16,"gpu_type":"H100-80GB","gpus_per_node":8,"topology":"nvswitch",
           "cpus":112,"host_memory_gib":2048,"nic_gbps":3200}],"network":{"nodes_per_rack":8}})"},
      {"pcie-v100",
       R"({"nodes":[{"count":16,"gpu_type":"V100-PCIe-32GB","gpus_per_node":8,"topology":"pcie",
           "cpus":48,"host_memory_gib":768,"nic_gbps":100}],"network":{"nodes_per_rack":16}})"},
      // The default cluster: a mixed fleet of 144 GPUs, small enough that the bundled Philly
      // window queues for real (traces/README.md gives its offered load).
      {"default",
       R"({"nodes":[
           {"count":6,"gpu_type":"V100-32GB","gpus_per_node":8,"topology":"hybrid-cube-mesh","cpus":40,"host_memory_gib":512,"nic_gbps":400},
           {"count":4,"gpu_type":"V100-PCIe-32GB","gpus_per_node":8,"topology":"pcie","cpus":48,"host_memory_gib":768,"nic_gbps":100},
           {"count":6,"gpu_type":"A100-80GB","gpus_per_node":8,"topology":"nvswitch","cpus":128,"host_memory_gib":2048,"nic_gbps":1600},
           {"count":2,"gpu_type":"H100-80GB","gpus_per_node":8,"topology":"nvswitch","cpus":112,"host_memory_gib":2048,"nic_gbps":3200}],
         "network":{"nodes_per_rack":6,"oversubscription":2.0}})"},
  };
  return presets;
}

NodeTopology DefaultTopology(const GpuSpec& gpu, int gpus_per_node) {
  if (gpu.nvlink_generation == 0 || gpu.form_factor == "PCIe") return NodeTopology::kPcie;
  if (gpu.form_factor == "SXM2" && gpus_per_node == 8) return NodeTopology::kHybridCubeMesh;
  return NodeTopology::kNvSwitch;
}


// A node group's "autoscale" object (docs/autoscaling.md#the-cluster-spec).
AutoscaleSpec ParseAutoscale(const nlohmann::json& a, const std::string& origin,
                             const std::string& where) {
  if (!a.is_object()) throw JsonValueError(origin, where, "expected an object");
  static const std::vector<std::string> kKeys = {"min", "max", "provision_seconds",
                                                 "idle_seconds"};
  for (const auto& [key, value] : a.items()) {
    if (std::find(kKeys.begin(), kKeys.end(), key) == kKeys.end()) {
      throw JsonValueError(origin, where + "." + key,
                           "unknown key \"" + key + "\"" + DidYouMean(key, kKeys) +
                               " (known: " + JoinNames(kKeys) + ")");
    }
  }
  AutoscaleSpec spec;
  spec.enabled = true;
  auto count = [&](const char* key) {
    const std::string at = where + "." + key;
    const double v = RequireNumber(RequireMember(a, key, origin, where), origin, at);
    if (!(v >= 0 && v <= 1'000'000) || v != std::floor(v)) {
      throw JsonValueError(origin, at, "expected an integer from 0 to 1000000 (nodes)");
    }
    return static_cast<int>(v);
  };
  spec.min = count("min");
  spec.max = count("max");
  if (spec.max < 1 || spec.max < spec.min) {
    throw JsonValueError(origin, where + ".max", "expected an integer >= 1 and >= min");
  }
  auto seconds = [&](const char* key, double* out) {
    if (!a.contains(key)) return;
    const std::string at = where + "." + key;
    *out = RequireDuration(a[key], origin, at);
    if (!(*out >= 0 && *out <= 365 * 86400.0)) {
      throw JsonValueError(origin, at, "expected a duration from 0 to 365 days");
    }
  };
  if (a.contains("provision_seconds") && a["provision_seconds"].is_object()) {
    // {"uniform": [low, high]}: a time drawn per request (docs/autoscaling.md#the-cluster-spec).
    const nlohmann::json& d = a["provision_seconds"];
    const std::string at = where + ".provision_seconds";
    for (const auto& [key, value] : d.items()) {
      if (key != "uniform") {
        throw JsonValueError(origin, at + "." + key,
                             "unknown key \"" + key + "\"" + DidYouMean(key, {"uniform"}) +
                                 " (known: uniform)");
      }
    }
    const nlohmann::json& range = RequireMember(d, "uniform", origin, at);
    if (!range.is_array() || range.size() != 2) {
      throw JsonValueError(origin, at + ".uniform", "expected [low, high] (two durations)");
    }
    double bounds[2];
    for (int i = 0; i < 2; ++i) {
      bounds[i] = RequireDuration(range[i], origin, at + ".uniform");
      if (!(bounds[i] >= 0 && bounds[i] <= 365 * 86400.0)) {
        throw JsonValueError(origin, at + ".uniform", "expected durations from 0 to 365 days");
      }
    }
    if (bounds[1] < bounds[0]) {
      throw JsonValueError(origin, at + ".uniform", "expected low <= high");
    }
    spec.provision_seconds = bounds[0];
    spec.provision_max_seconds = bounds[1];
  } else {
    seconds("provision_seconds", &spec.provision_seconds);
    spec.provision_max_seconds = spec.provision_seconds;
  }
  seconds("idle_seconds", &spec.idle_seconds);
  return spec;
}

// The "interruptions" file of a spot object: CSV with the header time,node (seconds >= 0; node
// index within the group, 0 to nodes - 1); a path relative to the cluster spec's directory.
std::vector<SpotInterruption> LoadSpotInterruptions(const std::string& path, int nodes) {
  const std::string text = ReadFileText(path);
  std::vector<SpotInterruption> out;
  CsvSplitter splitter;
  size_t begin = 0;
  int64_t line_number = 0;
  bool header = false;
  while (begin <= text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + begin, end - begin);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    ++line_number;
    begin = end + 1;
    if (TrimBlanks(line).empty()) continue;
    const std::vector<CsvField>& row = splitter.Split(line, path, line_number);
    if (!header) {
      if (row.size() != 2 || row[0].text != "time" || row[1].text != "node") {
        throw InputError(path, line_number, 1, "expected the header time,node");
      }
      header = true;
      continue;
    }
    if (row.size() != 2) {
      throw InputError(path, line_number, 1, "expected 2 fields (time,node), got " +
                                                 std::to_string(row.size()));
    }
    auto number = [&](const CsvField& f, const char* what, double lo, double hi,
                      const std::string& range) {
      const std::string s(f.text);
      char* stop = nullptr;
      const double v = s.empty() ? std::nan("") : std::strtod(s.c_str(), &stop);
      if (s.empty() || stop != s.c_str() + s.size() || !(v >= lo && v <= hi)) {
        throw InputError(path, line_number, f.column,
                         std::string(what) + ": expected a number from " + range + ", got \"" + s +
                             "\"");
      }
      return v;
    };
    SpotInterruption r;
    r.line = line_number;
    r.time = number(row[0], "time (seconds)", 0, 1e12, "0 to 1e12");
    const double node = number(row[1], "node (index within the group)", 0, nodes - 1,
                               "0 to " + std::to_string(nodes - 1));
    if (node != std::floor(node)) {
      throw InputError(path, line_number, row[1].column, "node: expected an integer");
    }
    r.node = static_cast<int>(node);
    out.push_back(r);
  }
  if (!header) throw InputError(path, 1, 1, "empty interruptions file: expected the header time,node");
  return out;
}

// A node group's "spot" object (docs/autoscaling.md#spot-capacity).
SpotSpec ParseSpot(const nlohmann::json& a, const std::string& origin, const std::string& where,
                   int nodes) {
  if (!a.is_object()) throw JsonValueError(origin, where, "expected an object");
  static const std::vector<std::string> kKeys = {"price_per_gpu_hour", "interruptions_per_hour",
                                                 "notice_seconds", "interruptions"};
  for (const auto& [key, value] : a.items()) {
    if (std::find(kKeys.begin(), kKeys.end(), key) == kKeys.end()) {
      throw JsonValueError(origin, where + "." + key,
                           "unknown key \"" + key + "\"" + DidYouMean(key, kKeys) +
                               " (known: " + JoinNames(kKeys) + ")");
    }
  }
  SpotSpec spec;
  spec.enabled = true;
  const std::string price_at = where + ".price_per_gpu_hour";
  spec.price_per_gpu_hour =
      RequireNumber(RequireMember(a, "price_per_gpu_hour", origin, where), origin, price_at);
  if (!(spec.price_per_gpu_hour >= 0 && spec.price_per_gpu_hour <= 1e6)) {
    throw JsonValueError(origin, price_at, "expected a price from 0 to 1000000 (USD per GPU-hour)");
  }
  if (a.contains("interruptions_per_hour")) {
    const std::string at = where + ".interruptions_per_hour";
    spec.interruptions_per_hour = RequireNumber(a["interruptions_per_hour"], origin, at);
    if (!(spec.interruptions_per_hour >= 0 && spec.interruptions_per_hour <= 3600)) {
      throw JsonValueError(origin, at, "expected a rate from 0 to 3600 (per node-hour)");
    }
  }
  if (a.contains("notice_seconds")) {
    const std::string at = where + ".notice_seconds";
    spec.notice_seconds = RequireDuration(a["notice_seconds"], origin, at);
    if (!(spec.notice_seconds >= 0 && spec.notice_seconds <= 86400)) {
      throw JsonValueError(origin, at, "expected a duration from 0 to 1 day");
    }
  }
  if (a.contains("interruptions")) {
    spec.interruptions_path = RequireString(a["interruptions"], origin, where + ".interruptions");
    std::string path = spec.interruptions_path;
    const size_t slash = origin.rfind('/');
    if (!path.empty() && path.front() != '/' && slash != std::string::npos &&
        origin.rfind("preset:", 0) != 0) {
      path = origin.substr(0, slash + 1) + path;
    }
    spec.interruptions = LoadSpotInterruptions(path, nodes);
  }
  if (!a.contains("interruptions_per_hour") && !a.contains("interruptions")) {
    throw JsonValueError(origin, where,
                         "expected \"interruptions_per_hour\" (per node-hour) or "
                         "\"interruptions\" (a CSV file time,node), or both");
  }
  return spec;
}

}  // namespace

bool Cluster::IsHeterogeneous() const {
  int first = -1;
  for (int type : gpu_types_) {
    const int alias_of = catalog_->gpu(type).alias_of;
    const int base = alias_of >= 0 ? alias_of : type;
    if (first < 0) first = base;
    if (base != first) return true;
  }
  return false;
}

const char* NodeTopologyName(NodeTopology t) {
  switch (t) {
    case NodeTopology::kNvSwitch:
      return "nvswitch";
    case NodeTopology::kHybridCubeMesh:
      return "hybrid-cube-mesh";
    case NodeTopology::kPcie:
      return "pcie";
  }
  return "?";
}

std::vector<std::string> ClusterSpec::PresetNames() {
  std::vector<std::string> names;
  for (const auto& [name, text] : Presets()) names.push_back(name);
  return names;
}

std::string ClusterSpec::PresetText(const std::string& name) {
  auto it = Presets().find(name);
  return it == Presets().end() ? std::string() : it->second;
}

ClusterSpec ClusterSpec::Load(const std::string& name_or_path, const HardwareCatalog& catalog) {
  if (std::string text = PresetText(name_or_path); !text.empty()) {
    return FromJsonText(text, "preset:" + name_or_path, catalog);
  }
  if (name_or_path.find('/') == std::string::npos &&
      name_or_path.find(".json") == std::string::npos) {
    std::string names;
    for (const auto& n : PresetNames()) names += (names.empty() ? "" : ", ") + n;
    throw InputError(name_or_path, 0, 0,
                     "not a cluster preset nor a .json file; presets: " + names);
  }
  return FromJsonText(ReadFileText(name_or_path), name_or_path, catalog);
}

ClusterSpec ClusterSpec::FromJsonText(const std::string& text, const std::string& origin,
                                      const HardwareCatalog& catalog) try {
  const nlohmann::json doc = ParseJsonText(text, origin);
  ClusterSpec spec;
  spec.origin = origin;
  spec.text = text;
  const auto& nodes = RequireMember(doc, "nodes", origin, "cluster spec");
  if (!nodes.is_array() || nodes.empty()) {
    throw JsonValueError::Verbatim(origin, "nodes",
                                   "\"nodes\": expected a non-empty array of node groups");
  }
  for (const auto& [key, value] : doc.items()) {
    if (key != "nodes" && key != "network" && key != "site" &&
        key != "storage") {
      throw JsonValueError(origin, key,
                           "unknown key \"" + key + "\" (known: nodes, network, site, storage)");
    }
  }
  static const char* kKnownGroupKeys[] = {"count",    "gpu_type",        "gpus_per_node",
                                          "topology", "cpus",            "host_memory_gib",
                                          "nic_gbps", "name",            "spares",
                                          "swap_seconds", "autoscale", "price_per_gpu_hour",
                                          "mig",      "spot"};
  for (size_t i = 0; i < nodes.size(); ++i) {
    const auto& g = nodes[i];
    const std::string where = "nodes[" + std::to_string(i) + "]";
    if (!g.is_object()) throw JsonValueError(origin, where, "expected an object");
    for (const auto& [key, value] : g.items()) {
      bool known = false;
      for (const char* k : kKnownGroupKeys) known = known || key == k;
      if (!known) {
        throw JsonValueError(origin, where,
                             "unknown key \"" + key + "\"" +
                                 DidYouMean(key, std::vector<std::string>(
                                                     std::begin(kKnownGroupKeys),
                                                     std::end(kKnownGroupKeys))));
      }
    }
    NodeGroupSpec group;
    if (g.contains("name")) group.name = RequireString(g["name"], origin, where + ".name");
    if (g.contains("autoscale")) {
      group.autoscale = ParseAutoscale(g["autoscale"], origin, where + ".autoscale");
      const double count = RequireNumber(RequireMember(g, "count", origin, where), origin,
                                         where + ".count");
      if (!(count >= group.autoscale.min && count <= group.autoscale.max) ||
          count != std::floor(count)) {
        throw JsonValueError(origin, where + ".count",
                             "expected an integer from autoscale.min (" +
                                 std::to_string(group.autoscale.min) + ") to autoscale.max (" +
                                 std::to_string(group.autoscale.max) +
                                 "): the pool's size at the start");
      }
      group.count = static_cast<int>(count);
    } else {
      group.count =
          RequirePositiveInt(RequireMember(g, "count", origin, where), origin, where + ".count");
    }
    if (g.contains("price_per_gpu_hour")) {
      group.price_per_gpu_hour =
          RequireNumber(g["price_per_gpu_hour"], origin, where + ".price_per_gpu_hour");
      if (!(group.price_per_gpu_hour >= 0) || !(group.price_per_gpu_hour <= 1e6)) {
        throw JsonValueError(origin, where + ".price_per_gpu_hour",
                             "expected a price from 0 to 1000000 (USD per GPU-hour)");
      }
    }
    group.gpu_type =
        RequireString(RequireMember(g, "gpu_type", origin, where), origin, where + ".gpu_type");
    const int type = catalog.Require(group.gpu_type, origin, where + ".gpu_type");
    group.gpus_per_node = RequirePositiveInt(RequireMember(g, "gpus_per_node", origin, where),
                                             origin, where + ".gpus_per_node");
    group.topology = DefaultTopology(catalog.gpu(type), group.gpus_per_node);
    if (g.contains("topology")) {
      const std::string t = RequireString(g["topology"], origin, where + ".topology");
      if (t == "nvswitch") {
        group.topology = NodeTopology::kNvSwitch;
      } else if (t == "hybrid-cube-mesh") {
        group.topology = NodeTopology::kHybridCubeMesh;
        if (group.gpus_per_node != 8) {
          throw JsonValueError(origin, where + ".topology",
                               "hybrid-cube-mesh requires gpus_per_node = 8");
        }
      } else if (t == "pcie") {
        group.topology = NodeTopology::kPcie;
      } else {
        throw JsonValueError(origin, where + ".topology",
                             "expected nvswitch, hybrid-cube-mesh or pcie, got \"" + t + "\"");
      }
    }
    if (g.contains("cpus")) group.cpus = RequirePositiveInt(g["cpus"], origin, where + ".cpus");
    if (g.contains("host_memory_gib")) {
      group.host_memory_gib =
          RequireNumber(g["host_memory_gib"], origin, where + ".host_memory_gib");
      if (group.host_memory_gib < 0) {
        throw JsonValueError(origin, where + ".host_memory_gib", "expected a number >= 0");
      }
    }
    if (g.contains("nic_gbps")) {
      group.nic_gbps = RequireNumber(g["nic_gbps"], origin, where + ".nic_gbps");
      if (group.nic_gbps <= 0) throw JsonValueError(origin, where + ".nic_gbps", "must be > 0");
    }
    if (g.contains("spares")) {
      const double spares = RequireNumber(g["spares"], origin, where + ".spares");
      if (!(spares >= 0) || spares != std::floor(spares) || spares > 1'000'000) {
        throw JsonValueError(origin, where + ".spares", "expected an integer >= 0");
      }
      group.spares = static_cast<int>(spares);
    }
    if (g.contains("swap_seconds")) {
      group.swap_seconds = RequireDuration(g["swap_seconds"], origin, where + ".swap_seconds");
      if (!(group.swap_seconds >= 0) || !std::isfinite(group.swap_seconds)) {
        throw JsonValueError(origin, where + ".swap_seconds", "expected a duration >= 0");
      }
      if (group.spares == 0) {
        throw JsonValueError(origin, where + ".swap_seconds",
                             "a swap time without spares: set \"spares\" (hot spare nodes of the "
                             "group) or drop swap_seconds");
      }
    }
    if (group.autoscale.enabled && group.spares > 0) {
      throw JsonValueError(origin, where + ".spares",
                           "a node pool (autoscale) cannot have hot spares: drop one of them");
    }
    if (g.contains("spot")) {
      group.spot = ParseSpot(g["spot"], origin, where + ".spot", group.node_count());
      if (group.spares > 0) {
        throw JsonValueError(origin, where + ".spares",
                             "spot capacity cannot have hot spares: drop one of them");
      }
    }
    if (g.contains("mig")) {
      if (!g["mig"].is_boolean()) {
        throw JsonValueError(origin, where + ".mig", "expected true or false");
      }
      group.mig = g["mig"].get<bool>();
      if (group.mig && MigProfilesOf(catalog.gpu(type).name).empty()) {
        throw JsonValueError(origin, where + ".mig",
                             "GPU type " + group.gpu_type +
                                 " has no MIG profiles; MIG is modelled for A100-40GB, "
                                 "A100-80GB, A100-PCIe-80GB, H100-80GB and H100-PCIe-80GB "
                                 "(docs/mig.md)");
      }
    }
    spec.groups.push_back(group);
  }
  if (doc.contains("network")) {
    const auto& n = doc["network"];
    if (!n.is_object()) throw JsonValueError(origin, "network", "expected an object");
    if (n.contains("nodes_per_rack")) {
      spec.network.nodes_per_rack =
          RequirePositiveInt(n["nodes_per_rack"], origin, "network.nodes_per_rack");
    }
    if (n.contains("oversubscription")) {
      spec.network.oversubscription =
          RequireNumber(n["oversubscription"], origin, "network.oversubscription");
      if (spec.network.oversubscription < 1) {
        throw JsonValueError(origin, "network.oversubscription", "expected a number >= 1");
      }
    }
    if (n.contains("latency_us")) {
      spec.network.latency_us = RequireNumber(n["latency_us"], origin, "network.latency_us");
      if (spec.network.latency_us < 0) {
        throw JsonValueError(origin, "network.latency_us", "expected a number >= 0");
      }
    }
  }
  if (doc.contains("site")) {
    std::vector<std::string> names;
    for (const NodeGroupSpec& g : spec.groups) names.push_back(g.name);
    spec.site = ParseSite(doc["site"], origin, names);
    if (spec.site.partitions.size() > 64) {
      throw JsonValueError(origin, "site.partitions", "at most 64 partitions are supported");
    }
  }
  if (doc.contains("storage")) {
    const auto& st = doc["storage"];
    if (!st.is_object()) throw JsonValueError(origin, "storage", "expected an object");
    for (const auto& [key, value] : st.items()) {
      if (key != "write_gbps" && key != "read_gbps" && key != "node_gbps") {
        throw JsonValueError(origin, "storage." + key,
                             "unknown key \"" + key +
                                 "\" (expected: write_gbps, read_gbps, node_gbps)");
      }
    }
    auto gbps = [&](const char* key) {
      const std::string where = std::string("storage.") + key;
      const double v = RequireNumber(st[key], origin, where);
      if (!(v > 0) || !std::isfinite(v)) {
        throw JsonValueError(origin, where, "expected a bandwidth > 0 (GB/s)");
      }
      return v;
    };
    spec.storage.write_gbps = gbps("write_gbps");
    spec.storage.read_gbps = st.contains("read_gbps") ? gbps("read_gbps") : spec.storage.write_gbps;
    if (st.contains("node_gbps")) spec.storage.node_gbps = gbps("node_gbps");
  }
  long long total = 0;
  for (const auto& g : spec.groups) {
    total += static_cast<long long>(g.node_count()) * g.gpus_per_node;
  }
  if (total > 50'000'000) {
    throw JsonValueError::Verbatim(
        origin, "nodes",
        "the node groups hold " + std::to_string(total) +
            " GPUs in all (sum of count x gpus_per_node): expected at most 50000000");
  }
  return spec;
} catch (const JsonValueError& e) {
  throw AtJsonPosition(e, origin, text);
}

std::string ClusterSpecJson(const std::vector<NodeGroupSpec>& groups, const NetworkSpec& network,
                            const StorageSpec& storage) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const NodeGroupSpec& g : groups) {
    nlohmann::json group = {{"count", g.count},
                            {"gpu_type", g.gpu_type},
                            {"gpus_per_node", g.gpus_per_node},
                            {"topology", NodeTopologyName(g.topology)},
                            {"nic_gbps", g.nic_gbps}};
    if (g.cpus > 0) group["cpus"] = g.cpus;
    if (g.host_memory_gib > 0) group["host_memory_gib"] = g.host_memory_gib;
    if (g.spares > 0) {
      group["spares"] = g.spares;
      group["swap_seconds"] = g.swap_seconds;
    }
    if (g.autoscale.enabled) {
      group["autoscale"] = {{"min", g.autoscale.min},
                            {"max", g.autoscale.max},
                            {"provision_seconds", g.autoscale.provision_seconds},
                            {"idle_seconds", g.autoscale.idle_seconds}};
      if (g.autoscale.provision_max_seconds > g.autoscale.provision_seconds) {
        group["autoscale"]["provision_seconds"] = {
            {"uniform", {g.autoscale.provision_seconds, g.autoscale.provision_max_seconds}}};
      }
    }
    if (g.price_per_gpu_hour >= 0) group["price_per_gpu_hour"] = g.price_per_gpu_hour;
    if (g.spot.enabled) {
      group["spot"] = {{"price_per_gpu_hour", g.spot.price_per_gpu_hour},
                       {"interruptions_per_hour", g.spot.interruptions_per_hour},
                       {"notice_seconds", g.spot.notice_seconds}};
      if (!g.spot.interruptions_path.empty()) {
        group["spot"]["interruptions"] = g.spot.interruptions_path;
      }
    }
    nodes.push_back(std::move(group));
  }
  nlohmann::json doc = {{"nodes", std::move(nodes)},
                        {"network",
                         {{"nodes_per_rack", network.nodes_per_rack},
                          {"oversubscription", network.oversubscription},
                          {"latency_us", network.latency_us}}}};
  if (storage.declared()) {
    doc["storage"] = {{"write_gbps", storage.write_gbps}, {"read_gbps", storage.read_gbps}};
    if (storage.node_gbps > 0) doc["storage"]["node_gbps"] = storage.node_gbps;
  }
  return doc.dump();
}

Cluster::Cluster(ClusterSpec spec, const HardwareCatalog& base_catalog)
    : spec_(std::move(spec)), catalog_(&base_catalog) {
  // Each node group's type, split by the site partitions its nodes belong to.
  const std::vector<SitePartition>& parts = spec_.site.partitions;
  std::vector<int> group_type(spec_.groups.size());
  std::vector<uint64_t> group_parts(spec_.groups.size(), 0);
  for (size_t p = 0; p < parts.size(); ++p) {
    for (int g : parts[p].node_groups) group_parts[g] |= uint64_t{1} << p;
  }
  for (size_t g = 0; g < spec_.groups.size(); ++g) {
    group_type[g] = base_catalog.Require(spec_.groups[g].gpu_type, spec_.origin, "gpu_type");
  }
  if (!parts.empty()) {
    const std::vector<int> base_type = group_type;  // before any group takes an alias
    auto catalog = std::make_shared<HardwareCatalog>(base_catalog);
    std::map<std::pair<int, uint64_t>, int> aliases;  // (type, partitions) -> alias type
    for (size_t g = 0; g < spec_.groups.size(); ++g) {
      bool split = false;  // nodes of this type in other partitions
      for (size_t h = 0; h < spec_.groups.size(); ++h) {
        split = split || (base_type[h] == base_type[g] && group_parts[h] != group_parts[g]);
      }
      if (!split) continue;
      auto [it, added] = aliases.try_emplace({group_type[g], group_parts[g]}, -1);
      if (added) {
        std::string name = base_catalog.gpu(group_type[g]).name + "@";
        bool first = true;
        for (size_t p = 0; p < parts.size(); ++p) {
          if (!((group_parts[g] >> p) & 1)) continue;
          name += (first ? "" : "+") + parts[p].name;
          first = false;
        }
        if (first) name += "none";
        it->second = catalog->AddAlias(group_type[g], name);
      }
      group_type[g] = it->second;
    }
    if (catalog->gpus().size() > 64) {
      throw InputError(spec_.origin, 0, 0,
                       "the site's partitions split the node groups into " +
                           std::to_string(catalog->gpus().size()) +
                           " GPU types with the catalog's: at most 64 are supported");
    }
    own_catalog_ = catalog;
    catalog_ = own_catalog_.get();
    partition_types_.assign(parts.size(), 0);
    for (size_t g = 0; g < spec_.groups.size(); ++g) {
      for (size_t p = 0; p < parts.size(); ++p) {
        if ((group_parts[g] >> p) & 1) partition_types_[p] |= uint64_t{1} << group_type[g];
      }
    }
  }
  // Spot groups (docs/autoscaling.md#spot-placement): a spot group whose type an on-demand group
  // also has gets the alias "<type>@spot", so that placement tells them apart by type.
  std::shared_ptr<HardwareCatalog> spot_catalog;
  std::map<int, int> spot_alias;  // type -> alias
  for (size_t g = 0; g < spec_.groups.size(); ++g) {
    if (!spec_.groups[g].spot.enabled) continue;
    bool shared = false;
    for (size_t h = 0; h < spec_.groups.size(); ++h) {
      shared = shared || (!spec_.groups[h].spot.enabled && group_type[h] == group_type[g]);
    }
    if (shared) {
      auto [it, added] = spot_alias.try_emplace(group_type[g], -1);
      if (added) {
        if (!spot_catalog) spot_catalog = std::make_shared<HardwareCatalog>(*catalog_);
        const GpuSpec& gpu = spot_catalog->gpu(group_type[g]);
        it->second = spot_catalog->AddAlias(gpu.alias_of >= 0 ? gpu.alias_of : group_type[g],
                                            gpu.name + "@spot");
      }
      for (size_t p = 0; p < parts.size(); ++p) {
        if ((group_parts[g] >> p) & 1) partition_types_[p] |= uint64_t{1} << it->second;
      }
      group_type[g] = it->second;
    }
    spot_types_ |= uint64_t{1} << group_type[g];
  }
  if (spot_catalog) {
    if (spot_catalog->gpus().size() > 64) {
      throw InputError(spec_.origin, 0, 0,
                       "spot groups split the node groups into " +
                           std::to_string(spot_catalog->gpus().size()) +
                           " GPU types with the catalog's: at most 64 are supported");
    }
    own_catalog_ = spot_catalog;
    catalog_ = own_catalog_.get();
  }
  const HardwareCatalog& catalog = *catalog_;
  gpus_per_type_.assign(catalog.gpus().size(), 0);
  for (size_t g = 0; g < spec_.groups.size(); ++g) {
    const auto& group = spec_.groups[g];
    const int type = group_type[g];
    if (gpus_per_type_[type] == 0) gpu_types_.push_back(type);
    for (int i = 0; i < group.node_count(); ++i) {
      Node node;
      node.index = static_cast<int>(nodes_.size());
      node.group = static_cast<int>(g);
      node.gpu_type = type;
      node.gpu_count = group.gpus_per_node;
      node.first_gpu = total_gpus_;
      node.rack = node.index / spec_.network.nodes_per_rack;
      node.topology = group.topology;
      node.cpus = group.cpus;
      node.host_memory_gib = group.host_memory_gib;
      node.nic_gbps = group.nic_gbps;
      node.pool = group.autoscale.enabled;
      node.starts_provisioned = !node.pool || i < group.count;
      has_pools_ = has_pools_ || node.pool;
      has_spot_ = has_spot_ || group.spot.enabled;
      node.spare = !node.pool && i >= group.count;
      node.mig = group.mig;
      spare_nodes_ += node.spare;
      nodes_.push_back(node);
      total_gpus_ += node.gpu_count;
      gpus_per_type_[type] += node.gpu_count;
      gpu_node_.insert(gpu_node_.end(), node.gpu_count, node.index);
    }
  }
  rack_count_ = nodes_.empty() ? 0 : nodes_.back().rack + 1;
}

uint64_t Cluster::TypeAndAliases(int type) const {
  uint64_t mask = uint64_t{1} << type;
  const std::vector<GpuSpec>& gpus = catalog_->gpus();
  for (size_t t = 0; t < gpus.size(); ++t) {
    if (gpus[t].alias_of == type) mask |= uint64_t{1} << t;
  }
  return mask;
}

uint64_t Cluster::PartitionTypes(int partition) const {
  return partition_types_.empty() ? ~uint64_t{0} : partition_types_[partition];
}

double Cluster::GroupPrice(int group) const {
  const NodeGroupSpec& g = spec_.groups[group];
  if (g.spot.enabled) return g.spot.price_per_gpu_hour;
  if (g.price_per_gpu_hour >= 0) return g.price_per_gpu_hour;
  return catalog_->gpu(*catalog_->Find(g.gpu_type)).price_per_gpu_hour;
}

int Cluster::RackNodeCount(int rack) const {
  const int first = RackFirstNode(rack);
  return std::min(spec_.network.nodes_per_rack, node_count() - first);
}

int Cluster::GpusOfType(int type) const {
  return type >= 0 && type < static_cast<int>(gpus_per_type_.size()) ? gpus_per_type_[type] : 0;
}

}  // namespace clustersim
