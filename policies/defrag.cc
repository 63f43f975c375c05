// Defragmentation by migration (policies/defrag.h, docs/defragmentation.md).
// Cost of a search: for each node the waiting job may use, the combinations of its movable jobs
// up to the fewest found so far (a node holds at most a few jobs), each checked with one
// placement query per moved job plus one for the waiting job on a copy of the free state.
#include "policies/defrag.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <utility>

namespace clustersim {
namespace {

// A running job the defragmenter may move: whole GPUs on one node, no MIG instance, no
// constraint class (data locality, node limit, anti-affinity), not holding whole nodes.
bool Movable(const SchedulingContext& context, JobId id) {
  const ActiveRun& live = context.active(id);
  const Allocation& held = live.allocation;
  if (held.gpus.empty() || held.milli > 0 || held.mig_profile >= 0) return false;
  if (live.request.whole_nodes || live.request.constraint != 0) return false;
  const Cluster& cluster = context.cluster();
  return cluster.NodeOfGpu(held.gpus.front()) == cluster.NodeOfGpu(held.gpus.back());
}

struct Candidate {
  JobId id;
  int gpus;
  double cost;  // GPUs x its preemption cost
};

// Tries to re-place `chosen` (in order) on the free GPUs off `node`, then the waiting job on the
// state after the moves. Fills `moves` and returns true if all fit. Works on `scratch`, a copy of
// the live free state, and leaves it as it found it (every step is undone in reverse order).
bool TryMoves(const SchedulingContext& context, JobId waiting, int node,
              const std::vector<Candidate>& chosen, Resources& scratch,
              std::vector<DefragMove>* moves) {
  const Placement& placement = context.placement();
  const Node& n = context.cluster().node(node);
  std::vector<int> block;
  for (int g = n.first_gpu; g < n.first_gpu + n.gpu_count; ++g) {
    if (scratch.IsGpuFree(g)) block.push_back(g);
  }
  if (!block.empty()) scratch.AllocateJob(HostDemand{}, block, 0);
  moves->clear();
  bool placed = true;
  for (const Candidate& c : chosen) {
    const PlacementRequest& request = context.active(c.id).request;
    DefragMove move{c.id, {}};
    if (!placement.Find(scratch, request, &move.to) || move.to.milli > 0 ||
        move.to.gpus.size() != static_cast<size_t>(c.gpus)) {
      placed = false;
      break;
    }
    TakeAllocation(scratch, request, move.to);
    moves->push_back(std::move(move));
  }
  if (!block.empty()) scratch.ReleaseJob(HostDemand{}, block, 0);
  bool fits = false;
  if (placed) {
    for (const DefragMove& move : *moves) {
      const ActiveRun& live = context.active(move.job);
      GiveBackAllocation(scratch, live.request, live.allocation);
    }
    Allocation allocation;
    fits = placement.Find(scratch, context.active(waiting).request, &allocation);
    for (auto it = moves->rbegin(); it != moves->rend(); ++it) {
      const ActiveRun& live = context.active(it->job);
      TakeAllocation(scratch, live.request, live.allocation);
    }
  }
  for (auto it = moves->rbegin(); it != moves->rend(); ++it) {
    GiveBackAllocation(scratch, context.active(it->job).request, it->to);
  }
  return placed && fits;
}

}  // namespace

double EstimatedEnd(const SchedulingContext& context, const Policy& policy, JobId id) {
  const JobRun& run = context.run(id);
  const ActiveRun& live = context.active(id);
  if (!(live.rate > 0)) return std::numeric_limits<double>::infinity();
  // The fields are as of the current interval's start (the engine updates them when it stops).
  double end = live.last_start + live.overhead_left + live.work_left / live.rate;
  const double walltime = policy.RequestedWalltime(context.job(id));
  if (walltime >= 0)
    end = std::min(end, live.last_start + std::max(0.0, walltime - run.run_seconds));
  return end;
}

DefragPlan PlanDefrag(const SchedulingContext& context, const Policy& policy, JobId waiting) {
  DefragPlan plan;
  plan.waiting = waiting;
  const ActiveRun& head = context.active(waiting);
  const PlacementRequest& request = head.request;
  if (request.gpus <= 0 || request.milli > 0 || request.whole_nodes || request.constraint != 0 ||
      context.job(waiting).mig_profile != 0 || context.placement().DrawsRandomNumbers() ||
      context.placement().IgnoresNodes()) {
    return plan;
  }
  const Cluster& cluster = context.cluster();
  const Resources& free = context.resources();
  const double now = context.now();
  // Moves do not make GPUs: with fewer free GPUs of its types than it asks, nothing can help.
  int free_allowed = 0;
  for (int type : cluster.gpu_types()) {
    if (request.AllowsType(type)) free_allowed += free.free_of_type(type);
  }
  if (free_allowed < request.gpus) return plan;
  // Running jobs by id (a deterministic order), grouped by the nodes they hold GPUs on.
  std::vector<JobId> running = context.running();
  std::sort(running.begin(), running.end());
  std::map<int, std::vector<std::pair<double, int>>> ends;  // node -> (end, GPUs freed then)
  std::map<int, double> share_end;                           // shared GPU -> its last share's end
  std::map<int, std::vector<Candidate>> movable;             // node -> its movable jobs
  for (JobId id : running) {
    const Allocation& held = context.active(id).allocation;
    if (held.gpus.empty()) continue;
    const double end = EstimatedEnd(context, policy, id);
    if (held.milli > 0 || held.mig_profile >= 0) {
      for (int g : held.gpus) share_end[g] = std::max(share_end[g], end);
      continue;
    }
    for (int g : held.gpus) ends[cluster.NodeOfGpu(g)].emplace_back(end, 1);
    if (Movable(context, id)) {
      const int gpus = static_cast<int>(held.gpus.size());
      movable[cluster.NodeOfGpu(held.gpus.front())].push_back(
          {id, gpus, gpus * context.preemption_cost(id)});
    }
  }
  for (const auto& [gpu, end] : share_end) ends[cluster.NodeOfGpu(gpu)].emplace_back(end, 1);
  // When the job could otherwise start: the earliest time some node it may use has its GPUs free.
  auto usable = [&](const Node& node) {
    return !node.spare && request.AllowsType(node.gpu_type) && node.gpu_count >= request.gpus;
  };
  for (const Node& node : cluster.nodes()) {
    if (!usable(node)) continue;
    int count = free.free_gpus(node.index);
    if (count >= request.gpus) continue;  // enough GPUs here already: something else blocks it
    auto list = ends[node.index];
    std::sort(list.begin(), list.end());
    for (const auto& [end, gpus] : list) {
      count += gpus;
      if (count >= request.gpus) {
        plan.otherwise_start = std::min(plan.otherwise_start, std::max(now, end));
        break;
      }
    }
  }
  plan.gain_gpu_seconds = request.gpus * (plan.otherwise_start - now);
  // The search (docs/defragmentation.md#search): on each node, the fewest movable jobs whose
  // GPUs with the node's free ones hold the job and which all fit elsewhere now; the node
  // needing the fewest moves wins, ties to the lower cost, then the lower node index.
  std::optional<Resources> scratch;  // copied once, when a node is worth trying
  size_t best_moves = SIZE_MAX;
  double best_cost = 0;
  std::vector<DefragMove> moves;
  for (const Node& node : cluster.nodes()) {
    if (!usable(node)) continue;
    const int need = request.gpus - free.free_gpus(node.index);
    auto it = movable.find(node.index);
    if (need <= 0 || it == movable.end()) continue;
    std::vector<Candidate> cands = it->second;
    std::stable_sort(cands.begin(), cands.end(), [](const Candidate& a, const Candidate& b) {
      return a.gpus != b.gpus ? a.gpus > b.gpus : a.id < b.id;
    });
    // Fewest jobs that could free `need` GPUs: the largest first.
    size_t least = 0;
    int sum = 0;
    for (; least < cands.size() && sum < need; ++least) sum += cands[least].gpus;
    if (sum < need || least > best_moves) continue;  // too few GPUs, or more moves than found
    // A necessary condition, one placement query: the job fits once every movable job of the
    // node is gone (freeing more never makes a fit fail). Most nodes end here when something
    // else than this node's GPUs holds the job back (CPUs, memory, its type).
    {
      Resources& state = scratch ? *scratch : scratch.emplace(free);
      for (const Candidate& c : cands) {
        const ActiveRun& live = context.active(c.id);
        GiveBackAllocation(state, live.request, live.allocation);
      }
      Allocation allocation;
      const bool could = context.placement().Find(state, request, &allocation);
      for (auto c = cands.rbegin(); c != cands.rend(); ++c) {
        const ActiveRun& live = context.active(c->id);
        TakeAllocation(state, live.request, live.allocation);
      }
      if (!could) continue;
    }
    const size_t m = cands.size();
    for (size_t k = std::max<size_t>(least, 1); k <= m && k <= best_moves; ++k) {
      // Combinations of k of the m candidates in lexicographic order of their positions.
      std::vector<size_t> pick(k);
      for (size_t i = 0; i < k; ++i) pick[i] = i;
      bool found = false;
      for (;;) {
        std::vector<Candidate> chosen;
        int gpus = 0;
        double cost = 0;
        for (size_t i : pick) {
          chosen.push_back(cands[i]);
          gpus += cands[i].gpus;
          cost += cands[i].cost;
        }
        const bool better = k < best_moves || cost < best_cost;
        // The moved jobs need as many free GPUs off the node.
        const bool room = free.total_free() - free.free_gpus(node.index) >= gpus;
        if (gpus >= need && cost < plan.gain_gpu_seconds && better && room &&
            TryMoves(context, waiting, node.index, chosen, *scratch, &moves)) {
          best_moves = k;
          best_cost = cost;
          plan.node = node.index;
          plan.moves = moves;
          plan.cost_gpu_seconds = cost;
          found = true;
        }
        // Next combination.
        size_t i = k;
        while (i > 0 && pick[i - 1] == m - k + i - 1) --i;
        if (i == 0) break;
        ++pick[i - 1];
        for (size_t j = i; j < k; ++j) pick[j] = pick[j - 1] + 1;
      }
      if (found) break;
    }
  }
  return plan;
}

namespace {

class Defragmenter final : public Policy {
 public:
  explicit Defragmenter(Policy& inner) : inner_(inner) {}
  explicit Defragmenter(std::unique_ptr<Policy> inner) : owned_(std::move(inner)), inner_(*owned_) {}

  void Schedule(SchedulingContext& context) override {
    inner_.Schedule(context);
    for (;;) {
      JobId waiting = context.QueueFront();
      while (waiting != kNoJob && !context.MayStart(waiting)) waiting = context.QueueNext(waiting);
      if (waiting == kNoJob) return;
      Allocation fits;
      if (context.TryPlace(waiting, &fits)) return;  // the policy chose not to start it
      const DefragPlan plan = PlanDefrag(context, inner_, waiting);
      if (plan.moves.empty() || !plan.Pays()) return;
      for (const DefragMove& move : plan.moves) context.Migrate(move.job, move.to);
      inner_.Schedule(context);
      if (context.run(waiting).state == JobState::kQueued) return;
    }
  }
  void OnArrival(SchedulingContext& c, JobId id) override { inner_.OnArrival(c, id); }
  void OnCompletion(SchedulingContext& c, JobId id) override { inner_.OnCompletion(c, id); }
  void OnTimer(SchedulingContext& c, JobId id, int tag) override { inner_.OnTimer(c, id, tag); }
  int WaitGroup(SchedulingContext& c, JobId id) override { return inner_.WaitGroup(c, id); }
  void OnRequeue(SchedulingContext& c, JobId id) override { inner_.OnRequeue(c, id); }
  double RequestedWalltime(const Job& job) const override { return inner_.RequestedWalltime(job); }
  bool Elastic() const override { return inner_.Elastic(); }
  bool SupportsShares() const override { return inner_.SupportsShares(); }
  bool PlacesMig() const override { return inner_.PlacesMig(); }
  bool WholeNodes(const Job& job) const override { return inner_.WholeNodes(job); }
  bool KeepsPromises() const override { return inner_.KeepsPromises(); }
  bool HonoursSiteRules() const override { return inner_.HonoursSiteRules(); }
  bool ServesQueueHead() const override { return inner_.ServesQueueHead(); }
  std::string IdleWarning(const Trace& trace, const ModelRuntime* models) const override {
    return inner_.IdleWarning(trace, models);
  }
  std::string PlacementWarning(const Cluster& cluster, const Placement& placement) const override {
    return inner_.PlacementWarning(cluster, placement);
  }
  std::string ClusterProblem(const Cluster& cluster) const override {
    return inner_.ClusterProblem(cluster);
  }
  bool OrdersByPriority() const override { return inner_.OrdersByPriority(); }
  void BeforeRun(const Trace& trace, uint64_t seed) override { inner_.BeforeRun(trace, seed); }
  std::string PlanningEstimates() const override { return inner_.PlanningEstimates(); }

 private:
  std::unique_ptr<Policy> owned_;  // null when the caller owns the inner policy
  Policy& inner_;
};

}  // namespace

std::unique_ptr<Policy> MakeDefragmenter(Policy& inner) {
  return std::make_unique<Defragmenter>(inner);
}

std::unique_ptr<Policy> MakeDefragmenter(std::unique_ptr<Policy> inner) {
  return std::make_unique<Defragmenter>(std::move(inner));
}

std::string DefragProblem(const Policy& policy, const std::string& name) {
  if (policy.ServesQueueHead()) return "";
  return "--defrag: policy " + name +
         " does not start the queue's first job as soon as it fits (or plans on its own copy of "
         "the free GPUs), so moving jobs to make room for that job would not start it; use "
         "--policy fcfs (docs/defragmentation.md)";
}

}  // namespace clustersim
