#include "workloads/openb_cluster.h"

#include <nlohmann/json.hpp>
#include <vector>

#include "sim/hardware/cluster.h"
#include "sim/util/error.h"
#include "workloads/openb_models.h"
#include "workloads/trace_csv.h"

namespace clustersim {

OpenbClusterResult OpenbNodeListToClusterSpec(const std::string& path,
                                              const std::map<std::string, std::string>& gpu_map,
                                              const HardwareCatalog& catalog, bool keep_order) {
  struct Group {
    std::string gpu_type;
    int64_t gpus, cpus;
    double memory_gib;
    int count;
  };
  std::vector<Group> groups;
  std::map<std::string, int64_t> unmapped;  // model -> nodes
  OpenbClusterResult result;

  LineReader reader(path);
  CsvSplitter splitter;
  std::string_view line;
  if (!reader.Next(&line)) throw InputError(path, 1, 1, "empty file: expected a header line");
  const CsvHeader header(splitter.Split(line, path, reader.line_number()),
                         {"sn", "cpu_milli", "memory_mib", "gpu", "model"}, 5, path,
                         reader.line_number(), "sn,cpu_milli,memory_mib,gpu,model");
  while (reader.Next(&line)) {
    if (line.empty()) continue;
    const auto& row = splitter.Split(line, path, reader.line_number());
    header.CheckWidth(row, line, path, reader.line_number());
    const CsvFieldParser parse(path, reader.line_number());
    const int64_t cpu_milli = parse.Integer(row[header.position(1)], "cpu_milli", 0, 1'000'000'000);
    const double memory_mib = parse.NonNegative(row[header.position(2)], "memory_mib");
    const int64_t gpus = parse.Integer(row[header.position(3)], "gpu", 0, 1'000'000);
    const CsvField& model_field = row[header.position(4)];
    if (gpus == 0) {
      ++result.cpu_only_nodes;
      continue;
    }
    std::string model(model_field.text);
    if (const OpenbModel* m = FindOpenbModel(model)) model = std::string(m->name);
    if (auto it = gpu_map.find(model); it != gpu_map.end()) model = it->second;
    if (auto it = gpu_map.find(std::string(model_field.text)); it != gpu_map.end()) {
      model = it->second;
    }
    if (!catalog.Find(model)) {
      ++unmapped[model];
      continue;
    }
    ++result.gpu_nodes;
    result.gpus += gpus;
    const int64_t cpus = (cpu_milli + 999) / 1000;
    const double memory_gib = memory_mib / 1024;
    bool found = false;
    for (size_t i = keep_order && !groups.empty() ? groups.size() - 1 : 0; i < groups.size(); ++i) {
      Group& g = groups[i];
      if (g.gpu_type == model && g.gpus == gpus && g.cpus == cpus && g.memory_gib == memory_gib) {
        ++g.count;
        found = true;
        break;
      }
    }
    if (!found) groups.push_back({model, gpus, cpus, memory_gib, 1});
  }
  if (!unmapped.empty()) {
    std::string list;
    for (const auto& [model, nodes] : unmapped) {
      list += (list.empty() ? "" : ", ") + model + " (" + std::to_string(nodes) + " nodes)";
    }
    throw InputError(path, 0, 0,
                     "GPU models without a catalog entry: " + list +
                         "; map each to a catalog type with --map-gpu MODEL=TYPE (valid types: " +
                         catalog.NameList() + ")");
  }
  if (groups.empty()) throw InputError(path, 0, 0, "no GPU nodes in the node list");
  nlohmann::json spec;
  spec["nodes"] = nlohmann::json::array();
  for (const Group& g : groups) {
    nlohmann::json group = {
        {"count", g.count}, {"gpu_type", g.gpu_type}, {"gpus_per_node", g.gpus}};
    if (g.cpus > 0) group["cpus"] = g.cpus;  // cpu_milli 0: unknown, which a spec says by omission
    group["host_memory_gib"] = g.memory_gib;
    spec["nodes"].push_back(std::move(group));
  }
  result.spec_json = spec.dump(1);
  // The spec is for `run --cluster`: whatever it would reject (more GPUs than a cluster may
  // hold) is this node list's error, reported now rather than by the run.
  // Positions would be those of the generated JSON, not of the node list: dropped.
  try {
    ClusterSpec::FromJsonText(result.spec_json, path, catalog);
  } catch (const InputError& e) {
    throw InputError(path, 0, 0, e.what_expected());
  }
  return result;
}

}  // namespace clustersim
