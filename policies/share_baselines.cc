// The GPU-sharing-aware baselines of the FGD paper (Weng et al., "Beware of Fragmentation:
// Scheduling GPU-Sharing Workloads with Fragmentation Gradient Descent", USENIX ATC'23, §5.1),
// as its artifact scores them (hkust-adsl/kubernetes-scheduler-simulator, pkg/simulator/plugin):
// docs/policies.md#gpu-sharing-baselines. Each scores every node where the request fits now with
// an integer in [0, 100] (the Kubernetes score range), takes the highest, ties to the lowest node
// index (the artifact breaks ties by the smallest node name; `trace cluster-from --keep-order`
// numbers openb's nodes in name order), then picks GPUs in that node:
//
//   share-best-fit  score int(100 x (1 - (0.5 (cpu free - cpu asked) / 128 cores + 0.5 (GPU milli
//                   free - asked) / 8000))), then min-max normalized over the feasible nodes to
//                   0..100 in integer arithmetic (all 0 when they are equal). Least left wins.
//   gpu-packing     a request that can use only partly used GPUs: 100 - (sum over the GPUs it
//                   would use of int(free milli x 100 / 1000)) / 10, at least 50; one that needs
//                   k > 0 whole free GPUs of a partly used node: max(50 - k, 33); on a completely
//                   free node of G GPUs: max(33 - G, G). The GPUs it would use: scanning the
//                   node's GPUs by increasing free milli (ties by index), those with enough free.
//   gpu-clustering  nodes running jobs of the request's kind (a share of one GPU, or n whole
//                   GPUs; the engine counts the kinds per node, Resources::job_kinds): only that
//                   kind 75 + b, with other kinds too 50 + b; nodes without GPU jobs 25 + b;
//                   nodes with only other kinds b; b = 25 x (8000 - free GPU milli) / 8000
//                   (integers).
//   dot-product     Tetris's alignment (Grandl et al., SIGCOMM'14) as the artifact scores it:
//                   100 x (1 - (cpu free x cpu asked / 128000^2 + GPU milli free x asked /
//                   8000^2) / 2), truncated: the smaller dot product of free and asked wins.
//   random-fit      a node drawn uniformly among the feasible ones, then a GPU drawn uniformly
//                   among those with enough free for a share (draws: std::mt19937_64 seeded with
//                   the run's seed, by rejection).
//
// A CPU-only request (0 GPUs, a CPU or memory demand; docs/resources.md#cpu-only-jobs) is scored
// on every node whose free CPUs and memory take it, as the artifact scores a pod without GPUs:
// share-best-fit and dot-product by their formulas with 0 GPU milli asked, gpu-packing and
// gpu-clustering 0 everywhere (the lowest node with room), random-fit a node drawn uniformly.
//
// GPU choice in the chosen node (the artifact's "best" GPU selection, for all but random-fit): a
// share goes to the GPU with the least free milli that still fits (ties: lowest index); whole
// GPUs are the lowest-index completely free ones. 128 cores and 8000 milli are the artifact's
// largest node (MaxSpecCpu, MaxSpecGpu). CPUs count only when the run limits host resources
// (docs/resources.md): otherwise the CPU terms are 0. A request larger than a node takes whole
// free nodes and its remainder as first-fit places them (openb has none: no pod asks for more
// than a node). What differs from the artifact is listed in docs/policies.md.
//
// Cost per Find: O(nodes x GPUs per node): every node is scored (the artifact scores every node
// too, percentageOfNodesToScore 100).
#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "policies/node_placement.h"
#include "policies/registry.h"
#include "sim/engine/fragmentation.h"
#include "sim/util/random.h"

namespace clustersim {
namespace {

enum class Rule { kBestFit, kPacking, kClustering, kDotProduct, kRandom };

// The artifact's normalization constants (pkg/type/open-gpu-share/utils/const.go).
constexpr double kMaxSpecCpuMilli = 128000;
constexpr double kMaxSpecGpuMilli = 8000;
constexpr int64_t kMaxScore = 100;

// A candidate node's state as the scores see it.
struct NodeView {
  int node = -1;
  std::vector<int> free;  // free milli per GPU of the node
  int64_t free_total = 0;
  int full = 0;           // completely free GPUs
  int64_t cpu_free = 0;   // milli-cores; 0 without host limits
  int64_t cpu_asked = 0;  // the job's charge on this node; 0 without host limits
  // gpu-clustering: the kinds of the jobs running on the node (Resources::job_kinds).
  const std::vector<std::pair<int, int>>* kinds = nullptr;
};

class ShareBaseline final : public Placement {
 public:
  ShareBaseline(Rule rule, const PlacementEnv& env, const Params& params)
      : rule_(rule), rng_(static_cast<uint64_t>(env.seed) ^ 0x5EED0F17ull) {
    (void)params;
  }

  bool SharesGpus() const override { return true; }
  bool PlacesCpuOnly() const override { return true; }
  bool CountsJobKinds() const override { return rule_ == Rule::kClustering; }
  bool DrawsRandomNumbers() const override { return rule_ == Rule::kRandom; }

  bool Find(const Resources& resources, const PlacementRequest& request,
            Allocation* out) const override {
    out->gpus.clear();
    out->gpu_type = -1;
    out->milli = 0;
    out->node = -1;
    if (IsCpuOnly(request)) return FindCpuOnly(resources, request, out);
    if (request.gpus <= 0) return false;
    const Cluster& cluster = resources.cluster();
    const bool share = request.milli > 0;
    const int64_t asked = share ? request.milli : int64_t{request.gpus} * kMilliPerGpu;
    // Feasible nodes, scored.
    views_.clear();
    for (int node = 0; node < cluster.node_count(); ++node) {
      const Node& n = cluster.node(node);
      if (!request.AllowsType(n.gpu_type) || (!share && n.gpu_count < request.gpus)) continue;
      NodeView view;
      view.node = node;
      view.free.resize(n.gpu_count);
      int fits = 0;
      for (int i = 0; i < n.gpu_count; ++i) {
        const int free = resources.free_milli(n.first_gpu + i);
        view.free[i] = free;
        view.free_total += free;
        view.full += free == kMilliPerGpu;
        fits += share ? free >= request.milli : free == kMilliPerGpu;
      }
      if (share ? fits == 0 : fits < request.gpus) continue;
      const int on_node = share ? 1 : request.gpus;
      if (!resources.HostFitsJob(node, request.host, on_node, on_node, request.milli)) continue;
      if (resources.host_limited()) {
        view.cpu_free = resources.free_cpu_milli(node);
        view.cpu_asked = HostChargeOn(n, request.host, on_node, on_node, request.milli).cpu_milli;
      }
      if (rule_ == Rule::kClustering) view.kinds = &resources.job_kinds(node);
      views_.push_back(std::move(view));
    }
    if (views_.empty()) {
      // Larger than any node: whole free nodes plus a first-fit remainder.
      return !share && PlaceOnNodes(resources, request, NodeRule::kFirstFit, out);
    }
    size_t chosen = 0;
    if (rule_ == Rule::kRandom) {
      chosen = Uniform(views_.size());
    } else {
      scores_.assign(views_.size(), 0);
      for (size_t k = 0; k < views_.size(); ++k) scores_[k] = Score(views_[k], request, asked);
      if (rule_ == Rule::kBestFit) Normalize(&scores_);
      for (size_t k = 1; k < views_.size(); ++k) {
        if (scores_[k] > scores_[chosen]) chosen = k;  // ties keep the lower node index
      }
    }
    const NodeView& view = views_[chosen];
    const Node& n = cluster.node(view.node);
    out->gpu_type = n.gpu_type;
    if (!share) {
      resources.AppendLowestFreeGpus(view.node, request.gpus, &out->gpus);
      return true;
    }
    int gpu = -1;
    if (rule_ == Rule::kRandom) {
      // Reservoir draw over the GPUs with enough free, in index order, as the artifact's
      // random GPU selection.
      int seen = 0;
      for (int i = 0; i < n.gpu_count; ++i) {
        if (view.free[i] >= request.milli && Uniform(static_cast<size_t>(++seen)) == 0) gpu = i;
      }
    } else {
      for (int i = 0; i < n.gpu_count; ++i) {
        if (view.free[i] >= request.milli && (gpu < 0 || view.free[i] < view.free[gpu])) gpu = i;
      }
    }
    out->gpus.push_back(n.first_gpu + gpu);
    out->milli = request.milli;
    return true;
  }

 private:
  // A CPU-only request (docs/resources.md#cpu-only-jobs): every node whose free CPUs and memory
  // take its demand is feasible and scored as the artifact scores a pod without GPUs: best-fit
  // and dot-product by their formulas with 0 GPU milli asked, gpu-packing and gpu-clustering 0
  // everywhere (so the lowest node index), random-fit a feasible node drawn uniformly.
  bool FindCpuOnly(const Resources& resources, const PlacementRequest& request,
                   Allocation* out) const {
    if (!resources.host_limited()) return false;
    const Cluster& cluster = resources.cluster();
    views_.clear();
    for (int node = 0; node < cluster.node_count(); ++node) {
      const Node& n = cluster.node(node);
      if (!CpuOnlyFits(resources, node, request)) continue;
      NodeView view;
      view.node = node;
      for (int i = 0; i < n.gpu_count; ++i)
        view.free_total += resources.free_milli(n.first_gpu + i);
      view.cpu_free = resources.free_cpu_milli(node);
      view.cpu_asked = HostChargeOn(n, request.host, 0, 0, 0).cpu_milli;
      views_.push_back(std::move(view));
    }
    if (views_.empty()) return false;
    size_t chosen = 0;
    if (rule_ == Rule::kRandom) {
      chosen = Uniform(views_.size());
    } else if (rule_ == Rule::kBestFit || rule_ == Rule::kDotProduct) {
      scores_.assign(views_.size(), 0);
      for (size_t k = 0; k < views_.size(); ++k) scores_[k] = Score(views_[k], request, 0);
      if (rule_ == Rule::kBestFit) Normalize(&scores_);
      for (size_t k = 1; k < views_.size(); ++k) {
        if (scores_[k] > scores_[chosen]) chosen = k;  // ties keep the lower node index
      }
    }
    out->node = views_[chosen].node;
    out->gpu_type = cluster.node(out->node).gpu_type;
    return true;
  }

  int64_t Score(const NodeView& view, const PlacementRequest& request, int64_t asked) const {
    switch (rule_) {
      case Rule::kBestFit: {
        // Go evaluates the sum cpu first, then GPU, in float64; int64() truncates.
        double left = 0;
        left += static_cast<double>(view.cpu_free - view.cpu_asked) / kMaxSpecCpuMilli * 0.5;
        left += static_cast<double>(view.free_total - asked) / kMaxSpecGpuMilli * 0.5;
        return static_cast<int64_t>((1.0 - left) * static_cast<double>(kMaxScore));
      }
      case Rule::kPacking:
        return PackingScore(view, request);
      case Rule::kClustering:
        return ClusteringScore(view, request);
      case Rule::kDotProduct: {
        const double cpu = static_cast<double>(view.cpu_free) / kMaxSpecCpuMilli *
                           (static_cast<double>(view.cpu_asked) / kMaxSpecCpuMilli);
        const double gpu = static_cast<double>(view.free_total) / kMaxSpecGpuMilli *
                           (static_cast<double>(asked) / kMaxSpecGpuMilli);
        const double product = (cpu + gpu) / 2;
        return static_cast<int64_t>(static_cast<double>(kMaxScore) * (1 - product));
      }
      case Rule::kRandom:
        break;
    }
    return 0;
  }

  static int64_t PackingScore(const NodeView& view, const PlacementRequest& request) {
    const int g = static_cast<int>(view.free.size());
    if (view.full == g) return std::max<int64_t>(kMaxScore / 3 - g, g);
    const int per_gpu = request.milli > 0 ? request.milli : kMilliPerGpu;
    std::vector<int> order(g);
    for (int i = 0; i < g; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return view.free[a] < view.free[b]; });
    int need = request.milli > 0 ? 1 : request.gpus;
    int whole_used = 0;
    int64_t free_percent = 0;  // sum of int(free x 100 / 1000) over the GPUs used
    for (int i : order) {
      if (need == 0) break;
      if (view.free[i] < per_gpu) continue;
      --need;
      whole_used += view.free[i] == kMilliPerGpu;
      free_percent += int64_t{view.free[i]} * 100 / kMilliPerGpu;
    }
    if (whole_used > 0) return std::max<int64_t>(kMaxScore / 2 - whole_used, kMaxScore / 3);
    return std::max<int64_t>(kMaxScore - free_percent / 10, kMaxScore / 2);
  }

  // The artifact's GpuClusteringScore on the kinds of the jobs running on the node (a share of
  // one GPU, or n whole GPUs; Resources::job_kinds): b + 75 where every job is of the request's
  // kind, b + 50 where that kind runs beside others, b + 25 on a node without GPU jobs, b where
  // only other kinds run.
  static int64_t ClusteringScore(const NodeView& view, const PlacementRequest& request) {
    const int kind = request.milli > 0 ? 0 : request.gpus;
    const std::vector<std::pair<int, int>>& kinds = *view.kinds;
    const bool mine = std::any_of(kinds.begin(), kinds.end(),
                                  [kind](const std::pair<int, int>& k) { return k.first == kind; });
    const int64_t b = (kMaxScore / 4) * (static_cast<int64_t>(kMaxSpecGpuMilli) - view.free_total) /
                      static_cast<int64_t>(kMaxSpecGpuMilli);
    if (mine) return b + (kinds.size() == 1 ? kMaxScore * 3 / 4 : kMaxScore * 2 / 4);
    return kinds.empty() ? b + kMaxScore / 4 : b;
  }

  // The artifact's NormalizeScore: (s - lowest) x 100 / (highest - lowest), integers; all 0 when
  // every score is the same.
  static void Normalize(std::vector<int64_t>* scores) {
    const auto [lo, hi] = std::minmax_element(scores->begin(), scores->end());
    const int64_t lowest = *lo;
    const int64_t range = *hi - lowest;
    for (int64_t& s : *scores) s = range == 0 ? 0 : (s - lowest) * kMaxScore / range;
  }

  size_t Uniform(size_t n) const { return static_cast<size_t>(UniformBelow(rng_, n)); }

  Rule rule_;
  mutable std::mt19937_64 rng_;
  // Scratch (Find is const and runs on one thread per placement object).
  mutable std::vector<NodeView> views_;
  mutable std::vector<int64_t> scores_;
};

template <Rule kRule>
std::unique_ptr<Placement> Make(const PlacementEnv& env, const Params& params) {
  return std::make_unique<ShareBaseline>(kRule, env, params);
}

}  // namespace
}  // namespace clustersim

CLUSTERSIM_REGISTER_PLACEMENT(share_best_fit, "share-best-fit",
                              "FGD paper's best-fit: least CPU and GPU left after placing; shares "
                              "GPUs",
                              clustersim::Make<clustersim::Rule::kBestFit>);
CLUSTERSIM_REGISTER_PLACEMENT(gpu_packing, "gpu-packing",
                              "FGD paper's packing: partly used GPUs, then partly used nodes, "
                              "then free nodes; shares GPUs",
                              clustersim::Make<clustersim::Rule::kPacking>);
CLUSTERSIM_REGISTER_PLACEMENT(gpu_clustering, "gpu-clustering",
                              "FGD paper's clustering: nodes holding jobs of the same kind; "
                              "shares GPUs",
                              clustersim::Make<clustersim::Rule::kClustering>);
CLUSTERSIM_REGISTER_PLACEMENT(dot_product, "dot-product",
                              "FGD paper's dot-product (Tetris alignment as its artifact scores "
                              "it); shares GPUs",
                              clustersim::Make<clustersim::Rule::kDotProduct>);
CLUSTERSIM_REGISTER_PLACEMENT(random_fit, "random-fit",
                              "a feasible node and GPU drawn at random (run seed); shares GPUs",
                              clustersim::Make<clustersim::Rule::kRandom>);
