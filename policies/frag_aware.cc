// frag-aware placement (docs/policies.md): Alibaba's Fragmentation Gradient Descent (Weng et al.,
// USENIX ATC'23). Among the nodes where a request fits, it takes the one (and the GPUs in it) whose
// expected fragmentation (sim/engine/fragmentation.h: the node's idle GPU capacity that a task
// drawn from the workload's size distribution could not use) grows least; ties go to the lowest
// node index, then the lowest GPU index. It shares GPUs: a fractional request (milli > 0) may land
// on a partly shared GPU with enough free milli or on a whole free GPU; a whole-GPU request of n <=
// G GPUs takes n whole free GPUs of one node (all alike, so the lowest-index ones); a request
// larger than a node takes floor(n/G) completely free nodes (lowest positions) of the first allowed
// partition where it fits, as first-fit does, and puts the remainder on the node of least growth.
//
// With host limits (docs/resources.md) a node whose free CPUs or memory cannot take the job is no
// candidate, and the measure counts CPUs as the paper does (sim/engine/fragmentation.h): the growth
// includes the classes the job's CPUs leave short. A CPU-only job (0 GPUs, a CPU or memory
// demand; docs/resources.md#cpu-only-jobs) goes to the node whose fragmentation its CPUs grow
// least, every node with room scored.
//
// The workload is PlacementEnv::workload (the trace's classes, built by `run`; `--param
// fgd_classes=paper` gives the paper's, sim/engine/fragmentation.h); without it the request itself
// is the only class. Parameters: type_order (listed): GPU-type order, TypeOrder in
// policies/node_placement.h; score (exact): `exact` compares the growths as computed, `sigmoid`
// as the FGD artifact scores them (hkust-adsl/kubernetes-scheduler-simulator, fgd_score.go): the
// integer int(100 x sigmoid(-growth / 1000)), so growths that close count as equal and the lower
// node index (then GPU index) wins.
//
// Cost per Find: O(N x C x G) for N candidate nodes of the allowed types (nodes with enough free;
// completely free nodes of one partition are all alike, so only the first is scored), C classes
// and G GPUs per node — a fractional request scores every distinct free value of a node in O(C)
// after an O(C x G) set-up (NodeFragmentationView). For the openb trace (1,523 nodes of <= 8 GPUs,
// 24 classes, ~8k pods) that is at most ~0.3 M steps per placement, and less on the default
// cluster: acceptable at that size (measured: placing openb's pods with shares until its 1,213
// GPU nodes were full took 0.13 s, under 20 us per Find, Release build), but it is a scan of the
// candidate nodes, not O(log nodes) as first-fit is.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "policies/node_placement.h"
#include "policies/registry.h"
#include "sim/engine/fragmentation.h"
#include "sim/util/error.h"

namespace clustersim {
namespace {

// Deltas are weighted sums of integers; values this close are equal and the lower index wins.
constexpr double kTieEpsilon = 1e-9;

// The artifact's score of a growth (milli): int64(sigmoid(-growth / 1000) x 100), higher better.
// Returned negated, so that lower is better as for the growth itself.
double SigmoidScore(double growth) {
  return -static_cast<double>(static_cast<int64_t>(100.0 / (1.0 + std::exp(growth / 1000.0))));
}

struct Best {
  double delta = std::numeric_limits<double>::infinity();
  int node = -1;
  int gpu = -1;  // fractional requests: the GPU to share
  bool sigmoid = false;  // compare SigmoidScore(delta) instead of delta
  // True if (delta, node, gpu) beats the current best.
  bool Beaten(double d, int n, int g) const {
    if (sigmoid && node >= 0) {
      const double mine = SigmoidScore(d);
      const double theirs = SigmoidScore(delta);
      if (mine != theirs) return mine < theirs;
      return n < node || (n == node && g < gpu);
    }
    if (node < 0 || d < delta - kTieEpsilon) return true;
    if (d > delta + kTieEpsilon) return false;
    return n < node || (n == node && g < gpu);
  }
  void Take(double d, int n, int g) {
    delta = d;
    node = n;
    gpu = g;
  }
};

class FragAware final : public Placement {
 public:
  FragAware(const PlacementEnv& env, const Params& params)
      : workload_(env.workload), order_(env, params) {
    const std::string score = params.String("score", "exact");
    if (score != "exact" && score != "sigmoid") {
      throw InputError("frag-aware: --param score=" + score + ": expected exact or sigmoid");
    }
    sigmoid_ = score == "sigmoid";
  }

  bool SharesGpus() const override { return true; }
  bool PlacesCpuOnly() const override { return true; }

  bool Find(const Resources& resources, const PlacementRequest& request,
            Allocation* out) const override {
    out->node = -1;
    if (IsCpuOnly(request)) {
      out->gpus.clear();
      out->milli = 0;
      return FindCpuOnly(resources, request, out);
    }
    return order_.Place(resources, request, out,
                        [&](const PlacementRequest& one, Allocation* found) {
                          return FindAnyType(resources, one, found);
                        });
  }

 private:
  bool FindAnyType(const Resources& resources, const PlacementRequest& request,
                   Allocation* out) const {
    out->gpus.clear();
    out->gpu_type = -1;
    out->milli = 0;
    if (request.gpus <= 0 && request.milli <= 0) return false;
    std::vector<TaskClass> own;
    std::span<const TaskClass> classes;
    if (workload_ != nullptr && !workload_->empty()) {
      classes = *workload_;
    } else {
      own.push_back(request.milli > 0 ? TaskClass{1, request.milli, 1.0, request.host.cpu_milli}
                                      : TaskClass{request.gpus, 0, 1.0, request.host.cpu_milli});
      classes = own;
    }
    if (request.milli > 0) return FindShare(resources, request, classes, out);
    return FindWhole(resources, request, classes, out);
  }

  // A CPU-only request (docs/resources.md#cpu-only-jobs), as the artifact scores a pod without
  // GPUs: every node whose free CPUs and memory take it is a candidate, its growth is the node's
  // fragmentation with the job's CPUs taken minus without (classes its CPUs leave short find the
  // node's idle GPUs fragmented), least growth (or highest sigmoid score) wins, ties to the
  // lowest node index. O(nodes x classes x GPUs per node), up to the first node where
  // nothing grows.
  bool FindCpuOnly(const Resources& resources, const PlacementRequest& request,
                   Allocation* out) const {
    if (!resources.host_limited()) return false;
    std::vector<TaskClass> own;
    std::span<const TaskClass> classes;
    if (workload_ != nullptr && !workload_->empty()) {
      classes = *workload_;
    } else {
      own.push_back(TaskClass{0, 0, 1.0, request.host.cpu_milli});
      classes = own;
    }
    const Cluster& cluster = resources.cluster();
    Best best;
    best.sigmoid = sigmoid_;
    for (int node = 0; node < cluster.node_count(); ++node) {
      const Node& n = cluster.node(node);
      if (!CpuOnlyFits(resources, node, request)) continue;
      NodeCpu cpu = CpuOf(resources, node);
      double delta = 0;
      if (cpu.limited()) {
        scratch_.resize(n.gpu_count);
        for (int i = 0; i < n.gpu_count; ++i) scratch_[i] = resources.free_milli(n.first_gpu + i);
        delta = Growth(node, 0, cpu.free_milli - HostChargeOn(n, request.host, 0, 0, 0).cpu_milli,
                       classes, cpu);
      }
      if (best.Beaten(delta, node, -1)) best.Take(delta, node, -1);
      // Taking CPUs never shrinks the measure (a class short of CPUs counts all idle GPUs, more
      // than those below its demand): no growth is the best score, and later nodes only tie.
      if (best.delta <= 0) break;
    }
    if (best.node < 0) return false;
    out->node = best.node;
    out->gpu_type = cluster.node(best.node).gpu_type;
    return true;
  }

  // The node's CPUs for the measure (not limited without host limits).
  static NodeCpu CpuOf(const Resources& resources, int node) {
    if (!resources.host_limited()) return NodeCpu{};
    const Node& n = resources.cluster().node(node);
    return NodeCpu{resources.free_cpu_milli(node), NodeCpuMilli(n)};
  }

  // Growth of `node`'s expected fragmentation if `take` of its whole free GPUs are allocated to a
  // job of `request` (which spans `allocation_gpus` GPUs in all).
  double WholeDelta(const Resources& resources, int node, int take,
                    std::span<const TaskClass> classes, const PlacementRequest& request,
                    int allocation_gpus) const {
    const Node& n = resources.cluster().node(node);
    scratch_.resize(n.gpu_count);
    for (int i = 0; i < n.gpu_count; ++i) scratch_[i] = resources.free_milli(n.first_gpu + i);
    NodeCpu cpu = CpuOf(resources, node);
    if (cpu.limited()) {
      cpu.free_milli -= HostChargeOn(n, request.host, take, allocation_gpus, 0).cpu_milli;
    }
    return Growth(node, take, cpu.free_milli, classes, CpuOf(resources, node));
  }

  // NodeFragmentation after `take` of the node's whole free GPUs (scratch_ holds its free milli)
  // are taken and its free CPUs become `cpu_after`, minus NodeFragmentation now (`cpu`: its CPUs
  // now), both from the node's NodeFragmentationView in O(classes) (the same arithmetic as
  // NodeFragmentation, so the same doubles). With the workload's classes (fixed for this object)
  // the view and the last values after a take are kept until the node's state changes.
  double Growth(int node, int take, int64_t cpu_after, std::span<const TaskClass> classes,
                const NodeCpu& cpu) const {
    NodeMemo* memo = MemoOf(node, scratch_, classes, cpu);
    const NodeFragmentationView& view = ViewIn(memo, scratch_, classes, cpu);
    const double before = view.current();
    if (memo == nullptr) return view.AfterTake(take, cpu_after) - before;
    for (const AfterEntry& entry : memo->after) {
      if (entry.take == take && entry.cpu_free == cpu_after) return entry.value - before;
    }
    const AfterEntry entry{take, cpu_after, view.AfterTake(take, cpu_after)};
    if (memo->after.size() < kAfterEntries) {
      memo->after.push_back(entry);
    } else {
      memo->after[memo->next_slot] = entry;
      memo->next_slot = (memo->next_slot + 1) % kAfterEntries;
    }
    return entry.value - before;
  }

  // What is remembered of one node (Growth, ViewOf), valid while the node's state is `free`,
  // `cpu_free` and `cpu_capacity`: its view and the last values after a take.
  struct AfterEntry {
    int take = 0;
    int64_t cpu_free = 0;
    double value = 0;
  };
  static constexpr size_t kAfterEntries = 8;
  struct NodeMemo {
    std::vector<int> free;
    int64_t cpu_free = 0;
    int64_t cpu_capacity = 0;
    std::optional<NodeFragmentationView> view;
    std::vector<AfterEntry> after;  // at most kAfterEntries, replaced in turn
    size_t next_slot = 0;
  };

  // The memory of `node` for its state `free_milli` and `cpu` (emptied if the state changed), or
  // null when `classes` are not the workload's.
  NodeMemo* MemoOf(int node, std::span<const int> free_milli, std::span<const TaskClass> classes,
                   const NodeCpu& cpu) const {
    if (workload_ == nullptr || classes.data() != workload_->data()) return nullptr;
    if (memos_.size() <= static_cast<size_t>(node)) memos_.resize(node + 1);
    NodeMemo& memo = memos_[node];
    if (memo.cpu_free != cpu.free_milli || memo.cpu_capacity != cpu.capacity_milli ||
        !std::equal(free_milli.begin(), free_milli.end(), memo.free.begin(), memo.free.end())) {
      memo.free.assign(free_milli.begin(), free_milli.end());
      memo.cpu_free = cpu.free_milli;
      memo.cpu_capacity = cpu.capacity_milli;
      memo.view.reset();
      memo.after.clear();
      memo.next_slot = 0;
    }
    return &memo;
  }

  // The node's NodeFragmentationView for its state now, kept in its memory until that changes.
  const NodeFragmentationView& ViewOf(int node, std::span<const int> free_milli,
                                      std::span<const TaskClass> classes,
                                      const NodeCpu& cpu) const {
    return ViewIn(MemoOf(node, free_milli, classes, cpu), free_milli, classes, cpu);
  }

  // The view kept in `memo` (made on first use), or a fresh one in one_view_ without a memo.
  const NodeFragmentationView& ViewIn(NodeMemo* memo, std::span<const int> free_milli,
                                      std::span<const TaskClass> classes,
                                      const NodeCpu& cpu) const {
    if (memo == nullptr) return one_view_.emplace(free_milli, classes, cpu);
    if (!memo->view) memo->view.emplace(free_milli, classes, cpu);
    return *memo->view;
  }

  // Scores every node of `part` with >= need whole free GPUs (the first completely free one
  // whose host resources take the job only), skipping positions in `exclude` (ascending) and
  // nodes whose host resources cannot take `need` of the job's `allocation_gpus` GPUs.
  void ScorePartition(const Resources& resources, const Partition& part, int need,
                      std::span<const TaskClass> classes, const std::vector<int>& exclude,
                      const PlacementRequest& request, int allocation_gpus, Best* best) const {
    const int g = part.gpus_per_node;
    auto excluded = [&](int pos) {
      return std::binary_search(exclude.begin(), exclude.end(), pos) ||
             !resources.HostFitsJob(part.nodes[pos], request.host, need, allocation_gpus);
    };
    for (int f = std::max(need, 1); f < g; ++f) {
      if (part.by_free_count[f] == 0) continue;
      for (int pos = part.by_free[f].FindFirst(); pos >= 0;
           pos = part.by_free[f].FindFrom(pos + 1)) {
        if (excluded(pos)) continue;
        const int node = part.nodes[pos];
        const double delta = WholeDelta(resources, node, need, classes, request, allocation_gpus);
        if (best->Beaten(delta, node, -1)) best->Take(delta, node, -1);
      }
    }
    if (!resources.host_limited()) {
      int pos = part.by_free[g].FindFirst();
      while (pos >= 0 && excluded(pos)) pos = part.by_free[g].FindFrom(pos + 1);
      if (pos >= 0) {
        const int node = part.nodes[pos];
        const double delta = WholeDelta(resources, node, need, classes, request, allocation_gpus);
        if (best->Beaten(delta, node, -1)) best->Take(delta, node, -1);
      }
      return;
    }
    // With host limits a node whose GPUs are all free stands for the others of its partition
    // whose host resources take the job and whose CPUs are as it: the same capacity and the same
    // free CPUs give the same growth (a CPU-only job may hold CPUs on a node of idle GPUs).
    seen_cpus_.clear();
    for (int pos = part.by_free[g].FindFirst(); pos >= 0; pos = part.by_free[g].FindFrom(pos + 1)) {
      if (excluded(pos)) continue;
      const int node = part.nodes[pos];
      if (!FirstOfItsCpus(resources, node)) continue;
      const double delta = WholeDelta(resources, node, need, classes, request, allocation_gpus);
      if (best->Beaten(delta, node, -1)) best->Take(delta, node, -1);
    }
  }

  bool FindWhole(const Resources& resources, const PlacementRequest& request,
                 std::span<const TaskClass> classes, Allocation* out) const {
    const int n = request.gpus;
    static const std::vector<int> kNone;
    Best best;
    best.sigmoid = sigmoid_;
    for (const Partition& part : resources.partitions()) {
      if (!request.AllowsType(part.gpu_type) || part.gpus_per_node < n) continue;
      ScorePartition(resources, part, n, classes, kNone, request, n, &best);
    }
    if (best.node >= 0) {
      out->gpu_type = resources.cluster().node(best.node).gpu_type;
      resources.AppendLowestFreeGpus(best.node, n, &out->gpus);
      return true;
    }
    // Larger than a node: whole free nodes plus the remainder (least FGD growth), in one
    // partition, as first-fit takes them.
    return PlaceAcrossNodes(
        resources, request,
        [&](const Partition& part, int remainder, const std::vector<int>& chosen) {
          Best rest;
          rest.sigmoid = sigmoid_;
          ScorePartition(resources, part, remainder, classes, chosen, request, n, &rest);
          return rest.node < 0 ? -1 : resources.position_of(rest.node);
        },
        out);
  }

  bool FindShare(const Resources& resources, const PlacementRequest& request,
                 std::span<const TaskClass> classes, Allocation* out) const {
    const Cluster& cluster = resources.cluster();
    const int milli = request.milli;
    // Candidate nodes: those with a shared GPU that has enough left, and those with a whole free
    // GPU (with all GPUs free, the first node per partition standing for the others: with host
    // limits, for the others whose host resources take the job and whose CPUs are as its).
    candidates_.clear();
    const IndexSet& shared = resources.shared_gpus();
    for (int g = shared.FindFirst(); g >= 0; g = shared.FindFrom(g + 1)) {
      if (resources.free_milli(g) < milli) continue;
      const int node = cluster.NodeOfGpu(g);
      if (!request.AllowsType(cluster.node(node).gpu_type)) continue;
      if (candidates_.empty() || candidates_.back() != node) candidates_.push_back(node);
    }
    for (const Partition& part : resources.partitions()) {
      if (!request.AllowsType(part.gpu_type)) continue;
      const int g = part.gpus_per_node;
      for (int f = 1; f < g; ++f) {
        if (part.by_free_count[f] == 0) continue;
        for (int pos = part.by_free[f].FindFirst(); pos >= 0;
             pos = part.by_free[f].FindFrom(pos + 1)) {
          candidates_.push_back(part.nodes[pos]);
        }
      }
      if (!resources.host_limited()) {
        if (const int pos = part.by_free[g].FindFirst(); pos >= 0) {
          candidates_.push_back(part.nodes[pos]);
        }
      } else {  // see ScorePartition
        seen_cpus_.clear();
        for (int pos = part.by_free[g].FindFirst(); pos >= 0;
             pos = part.by_free[g].FindFrom(pos + 1)) {
          const int node = part.nodes[pos];
          if (resources.HostFitsJob(node, request.host, 1, 1, milli) &&
              FirstOfItsCpus(resources, node)) {
            candidates_.push_back(node);
          }
        }
      }
    }
    std::sort(candidates_.begin(), candidates_.end());
    candidates_.erase(std::unique(candidates_.begin(), candidates_.end()), candidates_.end());

    Best best;
    best.sigmoid = sigmoid_;
    std::vector<int> seen;  // free values already scored on this node
    for (int node : candidates_) {
      if (!resources.HostFitsJob(node, request.host, 1, 1, milli)) continue;
      const Node& n = cluster.node(node);
      scratch_.resize(n.gpu_count);
      for (int i = 0; i < n.gpu_count; ++i) scratch_[i] = resources.free_milli(n.first_gpu + i);
      const NodeCpu cpu = CpuOf(resources, node);
      const NodeFragmentationView& view = ViewOf(node, scratch_, classes, cpu);
      const int64_t cpu_after =
          cpu.limited() ? cpu.free_milli - HostChargeOn(n, request.host, 1, 1, milli).cpu_milli
                        : -1;
      seen.clear();
      for (int i = 0; i < n.gpu_count; ++i) {
        const int free = scratch_[i];
        // GPUs with the same free milli give the same node state: score the lowest index only.
        if (free < milli || std::find(seen.begin(), seen.end(), free) != seen.end()) continue;
        seen.push_back(free);
        const double delta = view.AfterChange(free, free - milli, cpu_after) - view.current();
        if (best.Beaten(delta, node, n.first_gpu + i)) best.Take(delta, node, n.first_gpu + i);
      }
    }
    if (best.node < 0) return false;
    out->gpu_type = cluster.node(best.node).gpu_type;
    out->gpus.push_back(best.gpu);
    out->milli = milli;
    return true;
  }

  // True the first time a node of this CPU capacity and these free CPUs is seen since seen_cpus_
  // was cleared. Among nodes of one partition whose GPUs are all free, these are all a node's
  // growth depends on (memory only decides whether the job fits, which the callers ask first).
  bool FirstOfItsCpus(const Resources& resources, int node) const {
    const std::pair<int32_t, int32_t> cpus(NodeCpuMilli(resources.cluster().node(node)),
                                           resources.free_cpu_milli(node));
    if (std::find(seen_cpus_.begin(), seen_cpus_.end(), cpus) != seen_cpus_.end()) return false;
    seen_cpus_.push_back(cpus);
    return true;
  }

  const std::vector<TaskClass>* workload_;
  TypeOrder order_;
  bool sigmoid_ = false;
  mutable std::vector<std::pair<int32_t, int32_t>> seen_cpus_;
  // Scratch buffers (Find is const and runs on one thread per placement object).
  mutable std::vector<int> scratch_;
  mutable std::vector<int> candidates_;
  // Per node index: what Growth and ViewOf remember; one_view_ for a request that is its own
  // class.
  mutable std::vector<NodeMemo> memos_;
  mutable std::optional<NodeFragmentationView> one_view_;
};

}  // namespace
}  // namespace clustersim

CLUSTERSIM_REGISTER_PLACEMENT(frag_aware, "frag-aware",
                              "least growth of expected GPU fragmentation (Alibaba FGD, ATC'23); "
                              "shares GPUs among fractional jobs",
                              [](const clustersim::PlacementEnv& env,
                                 const clustersim::Params& params) {
                                return std::make_unique<clustersim::FragAware>(env, params);
                              });
