#include "sim/engine/placement_constraints.h"

#include <algorithm>
#include <cstdio>

#include "sim/engine/mig.h"
#include "sim/util/error.h"

namespace clustersim {
namespace {

// The node indices of a data_nodes text (canonical: ascending, distinct, as the readers write it).
std::vector<int> ParseNodes(const std::string& text) {
  std::vector<int> nodes;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('|', begin);
    if (end == std::string::npos) end = text.size();
    nodes.push_back(std::stoi(text.substr(begin, end - begin)));
    begin = end + 1;
  }
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  return nodes;
}

std::string NodeList(const std::vector<int>& nodes) {
  std::string out;
  for (int n : nodes) out += (out.empty() ? "" : "|") + std::to_string(n);
  return out;
}

}  // namespace

PlacementConstraints::PlacementConstraints(const Trace& trace, const Cluster& cluster,
                                           const ConstraintOptions& options)
    : options_(options) {
  if (!(options.locality_alpha >= 0 && options.locality_alpha <= 1)) {
    throw InputError("--locality-alpha: expected a fraction in [0, 1]");
  }
  if (options.max_nodes_per_job < 0) {
    throw InputError("--max-nodes-per-job: expected a node count >= 1 (0 = no limit)");
  }
  limits_.emplace_back();
  std::vector<SpreadRule> spread(1);
  const bool global = options.max_nodes_per_job > 0;
  if (trace.constraints.empty() && !global) return;
  class_of_.assign(trace.jobs.size(), 0);
  // (data nodes, max nodes, spread group) -> class, in order of first use.
  std::map<std::tuple<uint32_t, int, int>, uint16_t> classes;
  // Spread groups by name: (index, domain, the first job's line), in order of first use.
  std::map<uint32_t, std::tuple<int, SpreadDomain, int64_t>> groups;
  for (size_t i = 0; i < trace.jobs.size(); ++i) {
    const Job& job = trace.jobs[i];
    const JobConstraints* c = trace.ConstraintsOf(job);
    Symbol data = c != nullptr && options.locality_alpha > 0 ? c->data_nodes : Symbol();
    int max_nodes = options.max_nodes_per_job;
    if (c != nullptr && c->max_nodes > 0) {
      max_nodes = max_nodes > 0 ? std::min(max_nodes, c->max_nodes) : c->max_nodes;
    }
    SpreadRule rule;
    if (c != nullptr && !c->group.empty() && c->spread != SpreadDomain::kNone) {
      auto g = groups.find(c->group.id());
      if (g == groups.end()) {
        g = groups.emplace(c->group.id(), std::make_tuple(static_cast<int>(groups.size()),
                                                          c->spread, job.line))
                .first;
        group_names_.push_back(c->group.str());
      } else if (std::get<1>(g->second) != c->spread) {
        throw InputError(trace.path, static_cast<int>(job.line), c->group_column,
                         "job " + job.id + ": group " + c->group.str() + " spreads over " +
                             SpreadDomainName(std::get<1>(g->second)) + "s (line " +
                             std::to_string(std::get<2>(g->second)) +
                             "); every job of a group must state the same spread, got " +
                             SpreadDomainName(c->spread));
      }
      rule = SpreadRule{std::get<0>(g->second), c->spread};
    }
    if (data.empty() && max_nodes <= 0 && rule.empty()) continue;
    const auto key = std::make_tuple(data.id(), max_nodes, rule.group);
    auto it = classes.find(key);
    if (it == classes.end()) {
      NodeLimits limits;
      if (!data.empty()) {
        limits.data_nodes = ParseNodes(data.str());
        if (limits.data_nodes.back() >= cluster.node_count()) {
          throw InputError(trace.path, static_cast<int>(job.line), c->data_nodes_column,
                           "job " + job.id + ": data_nodes: node " +
                               std::to_string(limits.data_nodes.back()) + " is not in cluster " +
                               cluster.spec().origin + " (nodes 0 to " +
                               std::to_string(cluster.node_count() - 1) + ")");
        }
        limits.alpha = options.locality_alpha;
      }
      limits.max_nodes = max_nodes;
      if (limits_.size() > UINT16_MAX) {
        throw InputError(trace.path, static_cast<int>(job.line), 0,
                         "more than 65535 distinct combinations of data_nodes, max_nodes and "
                         "spread groups");
      }
      it = classes.emplace(key, static_cast<uint16_t>(limits_.size())).first;
      limits_.push_back(std::move(limits));
      spread.push_back(rule);
    }
    class_of_[i] = it->second;
  }
  if (!groups.empty()) {
    spread_rules_ = std::make_shared<std::vector<SpreadRule>>(std::move(spread));
  }
}

std::string PlacementConstraints::CheckSpread(const Resources& resources,
                                              const PlacementRequest& request,
                                              std::span<const int> gpus) const {
  const SpreadRule& rule = spread(request.constraint);
  if (rule.empty() || !resources.SpreadGroupRunning(rule)) return "";
  std::string why;
  ForEachNode(resources.cluster(), gpus, [&](int node, int) {
    if (!why.empty() || resources.SpreadAllowsNode(rule, node)) return;
    why = std::string("node ") + std::to_string(node) +
          (rule.domain == SpreadDomain::kRack
               ? " is in rack " + std::to_string(resources.cluster().node(node).rack) + ", where"
               : ", where") +
          " another job of group " + group_name(rule.group) + " runs (spread " +
          SpreadDomainName(rule.domain) + ")";
  });
  return why;
}

std::string PlacementConstraints::Check(const Cluster& cluster, const PlacementRequest& request,
                                        std::span<const int> gpus) const {
  if (request.constraint == 0 || gpus.empty()) return "";
  std::vector<std::pair<int, int>> per_node;
  ForEachNode(cluster, gpus, [&](int node, int count) { per_node.emplace_back(node, count); });
  return CheckNodeLimits(per_node, limits_[request.constraint]);
}

std::string PlacementConstraints::Describe(const PlacementRequest& request) const {
  const NodeLimits& limits = limits_[request.constraint];
  std::string out;
  char text[96];
  if (!limits.data_nodes.empty()) {
    std::snprintf(text, sizeof text, "%d of its GPUs (alpha %g) on its data nodes ",
                  LocalityNeed(limits.alpha, request.gpus), limits.alpha);
    out = text + NodeList(limits.data_nodes);
  }
  if (limits.max_nodes > 0) {
    out += (out.empty() ? "" : " and ") + std::string("at most ") +
           std::to_string(limits.max_nodes) + " node" + (limits.max_nodes == 1 ? "" : "s") +
           " (max_nodes)";
  }
  return out;
}

namespace {

// `resources` with everything free in the domains `rule` refuses (where jobs of its group run)
// taken: free GPUs whole, the free part of shared GPUs, the free memory slices of GPUs holding
// MIG instances, the free host resources (for CPU-only jobs), so that any strategy asked on the
// copy places only where the rule allows.
Resources WithoutRefusedDomains(const Resources& resources, const SpreadRule& rule) {
  Resources copy = resources;
  const Cluster& cluster = resources.cluster();
  std::vector<int> whole;
  for (int node = 0; node < cluster.node_count(); ++node) {
    if (resources.SpreadAllowsNode(rule, node)) continue;
    const Node& info = cluster.node(node);
    whole.clear();
    for (int g = info.first_gpu; g < info.first_gpu + info.gpu_count; ++g) {
      const int free = resources.free_milli(g);
      if (resources.IsGpuFree(g)) {
        whole.push_back(g);
      } else if (resources.mig_used(g) != 0) {
        CloseMigGpu(copy, g);  // its free memory slices
      } else if (free > 0) {
        copy.AllocateShare(g, free);
      }
    }
    copy.Allocate(whole);
    if (resources.host_limited()) {
      copy.AllocateHostOn(node, HostDemand{resources.free_cpu_milli(node),
                                           resources.free_memory_mib(node)});
    }
  }
  return copy;
}

}  // namespace

bool ConstrainedPlacement::Find(const Resources& resources, const PlacementRequest& request,
                                Allocation* out) const {
  const bool found = inner_.Find(resources, request, out);
  if (request.constraint == 0) return found;
  const SpreadRule& rule = constraints_.spread(request.constraint);
  const bool refuses = resources.SpreadGroupRunning(rule);
  const auto meets = [&](const Resources& on) {
    if (out->gpus.empty()) return out->node < 0 || on.SpreadAllowsNode(rule, out->node);
    return constraints_.Check(on.cluster(), request, out->gpus).empty() &&
           (!refuses || constraints_.CheckSpread(resources, request, out->gpus).empty());
  };
  if (!found) {
    if (IsCpuOnly(request)) return false;
  } else if (meets(resources)) {
    return true;
  }
  // Where the job's group runs is closed to it: ask the strategy again without those domains, so
  // that it still chooses by its own rule among the others.
  const Resources* on = &resources;
  std::optional<Resources> open;
  if (refuses) {
    open.emplace(WithoutRefusedDomains(resources, rule));
    on = &*open;
    if (found && inner_.Find(*on, request, out) && meets(*on)) return true;
  }
  out->gpus.clear();
  out->gpu_type = -1;
  out->milli = 0;
  out->node = -1;
  // Checked, not searched: the search knows neither whole nodes, tensor-parallel groups nor MIG
  // instances, and would break their rules.
  if (IsCpuOnly(request) || HasGroupRule(request)) return false;
  return Search(*on, request, out);
}

std::optional<WaitReason> ConstrainedPlacement::NoFitReason(const Resources& resources,
                                                            const PlacementRequest& request) const {
  const SpreadRule& rule = constraints_.spread(request.constraint);
  if (resources.SpreadGroupRunning(rule)) {
    // Would it fit were its group's jobs elsewhere? (Its other limits still apply.)
    Allocation scratch;
    const bool fits = inner_.Find(resources, request, &scratch) &&
                      constraints_.Check(resources.cluster(), request, scratch.gpus).empty();
    if (fits) return WaitReason::kSpread;
  }
  return inner_.NoFitReason(resources, request);
}

bool ConstrainedPlacement::Search(const Resources& resources, const PlacementRequest& request,
                                  Allocation* out) const {
  const NodeLimits& limits = constraints_.limits(request.constraint);
  const Cluster& cluster = resources.cluster();
  if (request.milli > 0) {
    // A share holds one GPU: on a data node (when the job has them), a partly shared GPU with room
    // first, then a whole free one; lowest index first.
    const int need = limits.data_nodes.empty() ? 0 : LocalityNeed(limits.alpha, 1);
    for (int pass = 0; pass < 2; ++pass) {
      for (int node = 0; node < cluster.node_count(); ++node) {
        const Node& info = cluster.node(node);
        if (!request.AllowsType(info.gpu_type) || (need > 0 && !limits.IsDataNode(node))) continue;
        for (int g = info.first_gpu; g < info.first_gpu + info.gpu_count; ++g) {
          const int free = resources.free_milli(g);
          const bool usable = pass == 0 ? free >= request.milli && free < 1000 : free == 1000;
          if (!usable) continue;
          const int one[] = {g};
          if (!resources.HostFitsGpus(request.host, one, request.milli)) continue;
          out->gpus = {g};
          out->gpu_type = info.gpu_type;
          out->milli = request.milli;
          return true;
        }
      }
    }
    return false;
  }
  const int need = limits.data_nodes.empty() ? 0 : LocalityNeed(limits.alpha, request.gpus);
  std::vector<NodeOffer> offers;
  for (const Partition& part : resources.partitions()) {
    if (!request.AllowsType(part.gpu_type)) continue;
    offers.clear();
    for (int node : part.nodes) {
      const int free = resources.free_gpus(node);
      if (free > 0) offers.push_back({node, free, limits.IsDataNode(node)});
    }
    const auto parts = SpreadOverNodes(offers, request.gpus, need, limits.max_nodes);
    if (parts.empty()) continue;
    out->gpus.clear();
    for (const auto& [node, count] : parts) resources.AppendLowestFreeGpus(node, count, &out->gpus);
    if (!resources.HostFitsGpus(request.host, out->gpus, 0)) continue;
    out->gpu_type = part.gpu_type;
    out->milli = 0;
    return true;
  }
  out->gpus.clear();
  out->gpu_type = -1;
  return false;
}

}  // namespace clustersim
