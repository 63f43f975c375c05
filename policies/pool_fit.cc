#include "policies/pool_fit.h"

#include <vector>

#include "sim/hardware/cluster.h"

namespace clustersim {

bool PoolFit::Fits(const SchedulingContext& ctx, const NodePools& pools, int group, JobId id) {
  const PlacementRequest& request = ctx.active(id).request;
  const int type = ctx.cluster().node(pools.nodes(group).front()).gpu_type;
  if (!request.AllowsType(type)) return false;
  if (ctx.placement().DrawsRandomNumbers()) return true;
  if (static_cast<int>(groups_.size()) <= group) groups_.resize(group + 1);
  PlacementRequest shaped = request;
  if (!ctx.resources().host_limited()) shaped.host = HostDemand{};  // never binds then
  auto [it, fresh] = groups_[group].fits.try_emplace(ShapeOf(shaped), false);
  if (fresh) it->second = ctx.placement().Find(EmptyPool(ctx, pools, group), request, &scratch_);
  return it->second;
}

const Resources& PoolFit::EmptyPool(const SchedulingContext& ctx, const NodePools& pools,
                                    int group) {
  std::unique_ptr<Resources>& empty = groups_[group].empty;
  if (empty) return *empty;
  const Cluster& cluster = ctx.cluster();
  empty = std::make_unique<Resources>(cluster);
  if (ctx.resources().host_limited()) empty->EnableHostLimits();
  std::vector<char> in_pool(cluster.node_count(), 0);
  for (int node : pools.nodes(group)) in_pool[node] = 1;
  std::vector<int> gpus;
  for (const Node& node : cluster.nodes()) {
    if (in_pool[node.index]) continue;
    gpus.clear();
    for (int g = node.first_gpu; g < node.first_gpu + node.gpu_count; ++g) gpus.push_back(g);
    empty->Allocate(gpus);
    empty->HoldOutHost(node.index);  // its CPUs and memory too, under host limits
  }
  return *empty;
}

}  // namespace clustersim
