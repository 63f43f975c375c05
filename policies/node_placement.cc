#include "policies/node_placement.h"

#include <algorithm>

#include "sim/engine/job.h"
#include "sim/engine/runtime_model.h"
#include "sim/util/error.h"

namespace clustersim {
namespace {

bool Excluded(const std::vector<int>& exclude, int pos) {
  return std::binary_search(exclude.begin(), exclude.end(), pos);
}

// The CPUs (milli) `gpus` of a job of `allocation_gpus` GPUs are charged on any node that
// declares CPUs when the job states its demand (HostChargeOn: ceil(demand x gpus /
// allocation_gpus)); 0 when it states none (then the charge depends on the node's capacity).
int MinCpuCharge(const HostDemand& demand, int gpus, int allocation_gpus) {
  if (demand.cpu_milli <= 0) return 0;
  if (gpus >= allocation_gpus) return demand.cpu_milli;
  return static_cast<int>((int64_t{demand.cpu_milli} * gpus + allocation_gpus - 1) /
                          allocation_gpus);
}

// The first position >= from of a node of `part` with exactly `free` free GPUs, stepping over
// those with fewer than `cpu` free CPUs (milli; 0 = no CPU demand) by the partition's index of
// free CPUs: a stated CPU demand charges every node that declares CPUs the same (HostChargeOn),
// so such a node cannot take it. -1 if none.
int NextWithCpus(const Partition& part, int free, int cpu, int from) {
  if (cpu > 0 && !part.cpu_by_free.empty())
    return part.cpu_by_free[free].FindFirstAtLeast(cpu, from);
  return part.by_free[free].FindFrom(from);
}

}  // namespace

int PickNode(const Partition& part, int gpus, NodeRule rule, const std::vector<int>& exclude,
             int* free_count) {
  if (gpus > part.gpus_per_node) return -1;
  if (rule == NodeRule::kFirstFit) {
    int pos = part.free_tree.FindFirstAtLeast(gpus, 0);
    while (pos >= 0 && Excluded(exclude, pos)) pos = part.free_tree.FindFirstAtLeast(gpus, pos + 1);
    if (pos >= 0) *free_count = part.free_tree.Get(pos);
    return pos;
  }
  for (int f = std::max(gpus, 1); f <= part.gpus_per_node; ++f) {
    if (part.by_free_count[f] == 0) continue;
    int pos = part.by_free[f].FindFirst();
    while (pos >= 0 && Excluded(exclude, pos)) pos = part.by_free[f].FindFrom(pos + 1);
    if (pos >= 0) {
      *free_count = f;
      return pos;
    }
  }
  return -1;
}

int PickNode(const Resources& resources, const Partition& part, int gpus, NodeRule rule,
             const std::vector<int>& exclude, const PlacementRequest& request, int allocation_gpus,
             int* free_count) {
  if (!resources.host_limited()) return PickNode(part, gpus, rule, exclude, free_count);
  if (gpus > part.gpus_per_node) return -1;
  auto skip = [&](int pos) {
    return Excluded(exclude, pos) ||
           !resources.HostFitsJob(part.nodes[pos], request.host, gpus, allocation_gpus);
  };
  if (rule == NodeRule::kFirstFit) {
    int pos = part.free_tree.FindFirstAtLeast(gpus, 0);
    while (pos >= 0 && skip(pos)) pos = part.free_tree.FindFirstAtLeast(gpus, pos + 1);
    if (pos >= 0) *free_count = part.free_tree.Get(pos);
    return pos;
  }
  const int cpu = MinCpuCharge(request.host, gpus, allocation_gpus);
  for (int f = std::max(gpus, 1); f <= part.gpus_per_node; ++f) {
    if (part.by_free_count[f] == 0) continue;
    int pos = NextWithCpus(part, f, cpu, 0);
    while (pos >= 0 && skip(pos)) pos = NextWithCpus(part, f, cpu, pos + 1);
    if (pos >= 0) {
      *free_count = f;
      return pos;
    }
  }
  return -1;
}

bool PlaceCpuOnly(const Resources& resources, const PlacementRequest& request, NodeRule rule,
                  Allocation* out) {
  out->gpus.clear();
  out->gpu_type = -1;
  out->milli = 0;
  out->node = -1;
  if (!resources.host_limited()) return false;
  const Cluster& cluster = resources.cluster();
  int best = -1;
  std::pair<int64_t, int64_t> best_left;  // (free CPUs, free memory) the charge leaves
  // A stated CPU demand is charged in full on every node that declares CPUs (HostChargeOn), so a
  // node with fewer free is passed without computing its charge.
  const int32_t cpu = request.host.cpu_milli;
  for (int node = 0; node < cluster.node_count(); ++node) {
    const Node& info = cluster.node(node);
    if (cpu > 0 && resources.free_cpu_milli(node) < cpu && info.cpus > 0) continue;
    if (!CpuOnlyFits(resources, node, request)) continue;
    if (rule == NodeRule::kFirstFit) {
      best = node;
      break;
    }
    const HostCharge charge = HostChargeOn(info, request.host, 0, 0, 0);
    const std::pair<int64_t, int64_t> left{
        int64_t{resources.free_cpu_milli(node)} - charge.cpu_milli,
        int64_t{resources.free_memory_mib(node)} - charge.memory_mib};
    if (best < 0 || left < best_left) {
      best = node;
      best_left = left;
    }
  }
  if (best < 0) return false;
  out->node = best;
  out->gpu_type = cluster.node(best).gpu_type;
  return true;
}

bool PlaceOnNodes(const Resources& resources, const PlacementRequest& request, NodeRule rule,
                  Allocation* out) {
  out->gpus.clear();
  out->gpu_type = -1;
  out->node = -1;
  if (IsCpuOnly(request)) return PlaceCpuOnly(resources, request, rule, out);
  const int n = request.gpus;
  if (n <= 0) return false;
  const auto& partitions = resources.partitions();
  static const std::vector<int> kNone;

  // Single node.
  int best_node = -1;
  int best_free = 0;
  for (const Partition& part : partitions) {
    if (!request.AllowsType(part.gpu_type) || part.gpus_per_node < n) continue;
    int free_count = 0;
    const int pos = PickNode(resources, part, n, rule, kNone, request, n, &free_count);
    if (pos < 0) continue;
    const int node = part.nodes[pos];
    const bool better = best_node < 0 ||
                        (rule == NodeRule::kFirstFit
                             ? node < best_node
                             : (free_count < best_free ||
                                (free_count == best_free && node < best_node)));
    if (better) {
      best_node = node;
      best_free = free_count;
    }
  }
  if (best_node >= 0) {
    out->gpu_type = resources.cluster().node(best_node).gpu_type;
    resources.AppendLowestFreeGpus(best_node, n, &out->gpus);
    return true;
  }

  // Several nodes: whole free nodes plus one node for the remainder, in one partition.
  return PlaceAcrossNodes(
      resources, request,
      [&resources, &request, rule, n](const Partition& part, int remainder,
                                      const std::vector<int>& chosen) {
        int free_count = 0;
        return PickNode(resources, part, remainder, rule, chosen, request, n, &free_count);
      },
      out);
}

bool PlaceAcrossNodes(const Resources& resources, const PlacementRequest& request,
                      const RemainderPicker& pick_remainder, Allocation* out) {
  const int n = request.gpus;
  const bool host = resources.host_limited();
  for (const Partition& part : resources.partitions()) {
    const int g = part.gpus_per_node;
    if (!request.AllowsType(part.gpu_type) || n <= g) continue;
    const int whole = n / g;
    const int remainder = n % g;
    if (part.by_free_count[g] < whole) continue;
    std::vector<int> chosen;  // positions, ascending
    const int cpu = host ? MinCpuCharge(request.host, g, n) : 0;
    for (int pos = NextWithCpus(part, g, cpu, 0);
         pos >= 0 && static_cast<int>(chosen.size()) < whole;
         pos = NextWithCpus(part, g, cpu, pos + 1)) {
      if (!host || resources.HostFitsJob(part.nodes[pos], request.host, g, n)) {
        chosen.push_back(pos);
      }
    }
    if (static_cast<int>(chosen.size()) < whole) continue;
    int remainder_pos = -1;
    if (remainder > 0) {
      remainder_pos = pick_remainder(part, remainder, chosen);
      if (remainder_pos < 0) continue;
    }
    // Ascending node indices: the chosen positions ascend, and so do the partition's nodes; the
    // remainder's node goes where it belongs.
    std::vector<int> nodes;
    nodes.reserve(chosen.size() + 1);
    for (int pos : chosen) nodes.push_back(part.nodes[pos]);
    if (remainder_pos >= 0) {
      const int node = part.nodes[remainder_pos];
      nodes.insert(std::lower_bound(nodes.begin(), nodes.end(), node), node);
    }
    out->gpu_type = part.gpu_type;
    for (int node : nodes) {
      const int take = (remainder_pos >= 0 && node == part.nodes[remainder_pos]) ? remainder : g;
      resources.AppendLowestFreeGpus(node, take, &out->gpus);
    }
    return true;
  }
  return false;
}

TypeOrder::TypeOrder(const PlacementEnv& env, const Params& params) : env_(env) {
  const std::string name = params.String("type_order", "listed");
  if (name == "listed") {
    kind_ = Kind::kListed;
  } else if (name == "fastest") {
    kind_ = Kind::kFastest;
  } else if (name == "cheapest") {
    kind_ = Kind::kCheapest;
  } else if (name == "least-loaded") {
    kind_ = Kind::kLeastLoaded;
  } else {
    throw InputError("parameter type_order=" + name +
                     ": expected listed, fastest, cheapest or least-loaded");
  }
  const std::string spot = params.String("spot", "allow");
  if (spot != "allow" && spot != "avoid" && spot != "prefer") {
    throw InputError("parameter spot=" + spot + ": expected allow, avoid or prefer");
  }
  if (spot != "allow") {
    const uint64_t spot_types = env.cluster != nullptr ? env.cluster->SpotTypes() : 0;
    if (spot_types == 0) {
      throw InputError("parameter spot=" + spot +
                       ": the cluster has no spot group to " + spot +
                       " (a node group's \"spot\" object; docs/autoscaling.md#spot-capacity)");
    }
    spot_first_ = spot == "prefer" ? spot_types : ~spot_types;
  }
}

const char* TypeOrder::Name(Kind kind) {
  switch (kind) {
    case Kind::kListed:
      return "listed";
    case Kind::kFastest:
      return "fastest";
    case Kind::kCheapest:
      return "cheapest";
    case Kind::kLeastLoaded:
      return "least-loaded";
  }
  return "?";
}

double TypeOrder::Rate(const PlacementRequest& request, int type) const {
  const uint32_t model = request.job != nullptr ? request.job->model.id() : 0;
  const auto key = std::make_tuple(model, request.gpus, request.milli, type);
  auto it = rates_.find(key);
  if (it != rates_.end()) return it->second;
  double rate = 0;
  if (env_.cluster != nullptr) {
    if (!empty_) empty_.emplace(*env_.cluster);
    PlacementRequest one = request;
    one.type_mask = uint64_t{1} << type;
    one.host = HostDemand{};
    Allocation ideal;
    if (PlaceOnNodes(*empty_, one, NodeRule::kFirstFit, &ideal)) {
      ideal.milli = request.milli;
      if (env_.runtime == nullptr) {
        rate = 1;
      } else if (request.job != nullptr) {
        rate = env_.runtime->Rate(*request.job, ideal);
      } else {
        Job job;
        job.gpus = request.gpus;
        rate = env_.runtime->Rate(job, ideal);
      }
    }
  }
  rates_.emplace(key, rate);
  return rate;
}

void TypeOrder::Order(const Resources& resources, const PlacementRequest& request,
                      std::vector<int>* types) const {
  const Cluster& cluster = resources.cluster();
  keyed_.clear();
  for (int type : cluster.gpu_types()) {
    if (!request.AllowsType(type)) continue;
    const double rate = Rate(request, type);
    if (!(rate > 0)) continue;  // the job cannot fit on this type at all
    double key = 0;
    switch (kind_) {
      case Kind::kListed:
        break;
      case Kind::kFastest:
        key = -rate;
        break;
      case Kind::kCheapest:
        key = cluster.catalog().gpu(type).price_per_gpu_hour * std::max(request.gpus, 1) / rate;
        break;
      case Kind::kLeastLoaded:
        key = 1.0 - static_cast<double>(resources.free_of_type(type)) / cluster.GpusOfType(type);
        break;
    }
    keyed_.emplace_back(key, type);
  }
  // Stable: equal keys keep the listed order.
  std::stable_sort(keyed_.begin(), keyed_.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  types->clear();
  for (const auto& [key, type] : keyed_) types->push_back(type);
  // The spot preference before the order's own (stable: each side keeps it).
  if (spot_first_ != 0) {
    std::stable_partition(types->begin(), types->end(),
                          [&](int type) { return (spot_first_ >> type) & 1; });
  }
}

}  // namespace clustersim
