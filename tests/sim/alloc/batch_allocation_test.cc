// Batch allocation under capacity, integrity, group, locality and node-count constraints: the
// constraint arithmetic by hand, hand-worked instances, the exact integer program against an
// independent brute force, the knapsack DP against the integer program where it applies, and the
// genetic algorithm's gap to the optimum on seeded small instances.
#include "sim/alloc/batch_allocation.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <numeric>
#include <random>

namespace clustersim {
namespace {

TEST(Constraints, LocalityNeedRoundsUpButNotPastAnExactProduct) {
  EXPECT_EQ(LocalityNeed(0.8, 5), 4);  // 4.000000000000001 in floating point
  EXPECT_EQ(LocalityNeed(0.8, 4), 4);  // 3.2 -> 4
  EXPECT_EQ(LocalityNeed(0.5, 3), 2);
  EXPECT_EQ(LocalityNeed(1.0, 7), 7);
  EXPECT_EQ(LocalityNeed(0.0, 7), 0);
  EXPECT_EQ(LocalityNeed(0.3, 10), 3);
}

TEST(Constraints, CheckNodeLimitsNamesWhatIsViolated) {
  NodeLimits limits;
  limits.data_nodes = {2, 5};
  limits.alpha = 0.8;
  EXPECT_EQ(CheckNodeLimits({{2, 3}, {5, 1}}, limits), "");
  EXPECT_EQ(CheckNodeLimits({{1, 2}, {2, 2}}, limits),
            "2 of 4 GPUs on its data nodes; needs 4 (alpha 0.8)");
  limits.max_nodes = 1;
  EXPECT_EQ(CheckNodeLimits({{2, 3}, {5, 1}}, limits), "2 nodes; at most 1 allowed (max_nodes)");
}

TEST(Constraints, SpreadOverNodesTakesTheFewestNodesThenTheMostLocal) {
  const std::vector<NodeOffer> offers = {{0, 8, false}, {1, 3, true}, {2, 4, true}, {3, 6, false}};
  // 6 GPUs, no locality: one node, the fullest (node 0).
  EXPECT_EQ(SpreadOverNodes(offers, 6, 0, 0), (std::vector<std::pair<int, int>>{{0, 6}}));
  // 6 GPUs, 5 local: the two data nodes hold 7: 4 on node 2, 2 on node 1.
  EXPECT_EQ(SpreadOverNodes(offers, 6, 5, 0),
            (std::vector<std::pair<int, int>>{{1, 2}, {2, 4}}));
  // 6 GPUs, 2 local, at most 2 nodes: two nodes are needed, and both data nodes (7 GPUs) are
  // the most local choice of two.
  EXPECT_EQ(SpreadOverNodes(offers, 6, 2, 2),
            (std::vector<std::pair<int, int>>{{1, 2}, {2, 4}}));
  // 8 GPUs, 2 local, at most 2 nodes: the data nodes hold 7; data node 2 and node 0 (8 free).
  EXPECT_EQ(SpreadOverNodes(offers, 8, 2, 2),
            (std::vector<std::pair<int, int>>{{0, 4}, {2, 4}}));
  // 20 GPUs on at most 3 nodes: 8 + 6 + 4 = 18 < 20.
  EXPECT_TRUE(SpreadOverNodes(offers, 20, 0, 3).empty());
  EXPECT_EQ(SpreadOverNodes(offers, 20, 0, 4).size(), 4u);
  // 8 local GPUs needed: the data nodes hold 7.
  EXPECT_TRUE(SpreadOverNodes(offers, 8, 8, 0).empty());
}

// SpreadOverNodes' rule by enumeration: among the node sets that hold the GPUs, the local need
// and the node limit, the fewest nodes, then the most data nodes; the set of that size is then
// the fullest data nodes and the fullest others (ties: lower index), filled data nodes first.
std::vector<std::pair<int, int>> SpreadByEnumeration(const std::vector<NodeOffer>& offers, int gpus,
                                                     int need_local, int max_nodes) {
  const int n = static_cast<int>(offers.size());
  int best_k = n + 1, best_d = -1;
  for (uint32_t set = 1; set < (1u << n); ++set) {
    int k = 0, d = 0, total = 0, local = 0;
    for (int i = 0; i < n; ++i) {
      if (!(set >> i & 1) || offers[i].free <= 0) continue;
      ++k;
      total += offers[i].free;
      if (offers[i].data) {
        ++d;
        local += offers[i].free;
      }
    }
    if (k == 0 || total < gpus || local < need_local || (max_nodes > 0 && k > max_nodes)) continue;
    if (k < best_k || (k == best_k && d > best_d)) {
      best_k = k;
      best_d = d;
    }
  }
  std::vector<std::pair<int, int>> out;
  if (best_d < 0) return out;
  auto fullest = [&](bool data, int count) {
    std::vector<NodeOffer> kind;
    for (const NodeOffer& o : offers) {
      if (o.data == data && o.free > 0) kind.push_back(o);
    }
    std::sort(kind.begin(), kind.end(), [](const NodeOffer& a, const NodeOffer& b) {
      return a.free != b.free ? a.free > b.free : a.node < b.node;
    });
    kind.resize(count);
    return kind;
  };
  int left = gpus;
  for (bool data : {true, false}) {
    for (const NodeOffer& o : fullest(data, data ? best_d : best_k - best_d)) {
      if (left == 0) break;
      out.emplace_back(o.node, std::min(left, o.free));
      left -= out.back().second;
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(Constraints, SpreadOverNodesAgreesWithEnumerationOnRandomOffers) {
  std::mt19937 rng(17);
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int trial = 0; trial < 3000; ++trial) {
    std::vector<NodeOffer> offers;
    const int n = uniform(1, 12);  // more than the 8 a search first sorts
    for (int i = 0; i < n; ++i) offers.push_back({3 * i + 1, uniform(0, 4), uniform(0, 3) == 0});
    std::shuffle(offers.begin(), offers.end(), rng);
    const int gpus = uniform(1, 20);
    const int need = uniform(0, 2) == 0 ? uniform(1, gpus) : 0;
    const int max_nodes = uniform(0, 2) == 0 ? uniform(1, 6) : 0;
    ASSERT_EQ(SpreadOverNodes(offers, gpus, need, max_nodes),
              SpreadByEnumeration(offers, gpus, need, max_nodes))
        << "trial " << trial;
  }
}

AllocJob Job(int gpus, double value, std::vector<double> value_in_group = {}) {
  AllocJob job;
  job.gpus = gpus;
  job.value = value;
  job.value_in_group = std::move(value_in_group);
  return job;
}

BatchInstance TwoNodesFourJobs() {
  BatchInstance instance;
  instance.nodes = {{4, 0}, {4, 0}};
  instance.jobs = {Job(6, 6.0), Job(4, 5.0), Job(3, 3.0), Job(1, 1.5)};
  return instance;
}

TEST(BatchAllocation, FirstFitDecreasingMissesTheBestSetThatTheExactMethodsFind) {
  // 8 free GPUs. FFD takes the 6-GPU job first (4 + 2), then only the 1-GPU job fits: 7.5.
  // The optimum is {4, 3, 1} = 9.5.
  const BatchInstance instance = TwoNodesFourJobs();
  const BatchSolution greedy = GreedyAllocate(instance);
  EXPECT_EQ(CheckBatchSolution(instance, greedy), "");
  EXPECT_DOUBLE_EQ(greedy.value, 7.5);
  EXPECT_EQ(greedy.placement[0], (std::vector<std::pair<int, int>>{{0, 4}, {1, 2}}));
  const auto exact = ExactAllocate(instance, 30);
  ASSERT_TRUE(exact.has_value());
  EXPECT_EQ(CheckBatchSolution(instance, *exact), "");
  EXPECT_DOUBLE_EQ(exact->value, 9.5);
  EXPECT_TRUE(exact->placement[0].empty());
  ASSERT_TRUE(IsOneDimensional(instance));
  const auto dp = DpAllocate(instance);
  ASSERT_TRUE(dp.has_value());
  EXPECT_EQ(CheckBatchSolution(instance, *dp), "");
  EXPECT_DOUBLE_EQ(dp->value, 9.5);
  const BatchSolution ga = GeneticAllocate(instance, GeneticOptions{});
  EXPECT_EQ(CheckBatchSolution(instance, ga), "");
  EXPECT_DOUBLE_EQ(ga.value, 9.5);
}

TEST(BatchAllocation, LocalityMovesAJobToItsDataNode) {
  BatchInstance instance;
  instance.nodes = {{4, 0}, {4, 0}, {4, 0}};
  AllocJob job = Job(4, 1.0);
  instance.jobs = {job};
  EXPECT_EQ(GreedyAllocate(instance).placement[0], (std::vector<std::pair<int, int>>{{0, 4}}));
  instance.jobs[0].limits.data_nodes = {2};
  instance.jobs[0].limits.alpha = 1.0;
  EXPECT_EQ(GreedyAllocate(instance).placement[0], (std::vector<std::pair<int, int>>{{2, 4}}));
  EXPECT_FALSE(IsOneDimensional(instance));
  EXPECT_FALSE(DpAllocate(instance).has_value());
  // Half of it local, with node 2 holding 2 free GPUs: 2 there, 2 on the fullest other node.
  instance.nodes[2].free = 2;
  instance.jobs[0].limits.alpha = 0.5;
  EXPECT_EQ(GreedyAllocate(instance).placement[0],
            (std::vector<std::pair<int, int>>{{0, 2}, {2, 2}}));
  const auto exact = ExactAllocate(instance, 30);
  ASSERT_TRUE(exact.has_value());
  EXPECT_EQ(CheckBatchSolution(instance, *exact), "");
  EXPECT_DOUBLE_EQ(exact->value, 1.0);
}

TEST(BatchAllocation, NodeCountLimitRefusesASpreadJob) {
  BatchInstance instance;
  instance.nodes = {{2, 0}, {2, 0}, {2, 0}, {2, 0}};
  AllocJob job = Job(6, 1.0);
  job.limits.max_nodes = 2;
  instance.jobs = {job};
  EXPECT_TRUE(GreedyAllocate(instance).placement[0].empty());
  EXPECT_DOUBLE_EQ(ExactAllocate(instance, 30)->value, 0.0);
  instance.jobs[0].limits.max_nodes = 3;
  EXPECT_EQ(GreedyAllocate(instance).placement[0].size(), 3u);
  EXPECT_DOUBLE_EQ(ExactAllocate(instance, 30)->value, 1.0);
}

TEST(BatchAllocation, AJobStaysInOneGroupAndTakesItsBestValuedGroup) {
  BatchInstance instance;
  instance.nodes = {{2, 0}, {2, 1}};
  AllocJob job = Job(4, 1.0);
  instance.jobs = {job};  // 2 + 2 GPUs but in two groups: it cannot start
  EXPECT_TRUE(GreedyAllocate(instance).placement[0].empty());
  EXPECT_DOUBLE_EQ(ExactAllocate(instance, 30)->value, 0.0);
  instance.jobs[0] = Job(2, 1.0, {1.0, 3.0});
  EXPECT_EQ(GreedyAllocate(instance).placement[0], (std::vector<std::pair<int, int>>{{1, 2}}));
  EXPECT_DOUBLE_EQ(ExactAllocate(instance, 30)->value, 3.0);
}

// Random small instances: 2 to 5 nodes in 1 or 2 groups, 3 to 8 jobs, some with locality or a
// node limit.
std::vector<BatchInstance> RandomInstances(uint64_t seed, int count, int max_jobs) {
  std::mt19937_64 rng(seed);
  auto uniform = [&](int lo, int hi) { return lo + static_cast<int>(rng() % (hi - lo + 1)); };
  std::vector<BatchInstance> out;
  for (int k = 0; k < count; ++k) {
    BatchInstance instance;
    const int nodes = uniform(2, 5);
    const int groups = uniform(1, 2);
    for (int i = 0; i < nodes; ++i) instance.nodes.push_back({uniform(0, 8), i % groups});
    const int jobs = uniform(3, max_jobs);
    for (int j = 0; j < jobs; ++j) {
      AllocJob job;
      job.gpus = uniform(1, 12);
      job.value = job.gpus * (0.5 + uniform(0, 100) / 100.0);
      if (uniform(0, 3) == 0) {
        job.limits.data_nodes = {uniform(0, nodes - 1)};
        job.limits.alpha = uniform(1, 4) / 4.0;
      }
      if (uniform(0, 3) == 0) job.limits.max_nodes = uniform(1, 2);
      instance.jobs.push_back(job);
    }
    out.push_back(instance);
  }
  return out;
}

// The best value by enumeration: every subset of jobs, each job's GPUs over the nodes of a group
// in every way (compositions), checked with CheckBatchSolution. Independent of the integer
// program. Exponential: tiny instances only.
double BruteForce(const BatchInstance& instance) {
  const int n = static_cast<int>(instance.jobs.size());
  const int nodes = static_cast<int>(instance.nodes.size());
  double best = 0;
  BatchSolution current;
  current.placement.resize(n);
  std::vector<int> free(nodes);
  for (int i = 0; i < nodes; ++i) free[i] = instance.nodes[i].free;
  std::function<void(int, double)> job_step;
  // Distributes `left` GPUs of job j over nodes from `i` on within `group`.
  std::function<void(int, int, int, int, double)> spread = [&](int j, int group, int i, int left,
                                                              double value) {
    if (left == 0) {
      const AllocJob& job = instance.jobs[j];
      if (CheckNodeLimits(current.placement[j], job.limits).empty()) job_step(j + 1, value);
      return;
    }
    if (i == nodes) return;
    spread(j, group, i + 1, left, value);
    if (instance.nodes[i].group != group) return;
    for (int take = 1; take <= std::min(left, free[i]); ++take) {
      free[i] -= take;
      current.placement[j].emplace_back(i, take);
      spread(j, group, i + 1, left - take, value);
      current.placement[j].pop_back();
      free[i] += take;
    }
  };
  job_step = [&](int j, double value) {
    if (j == n) {
      best = std::max(best, value);
      return;
    }
    job_step(j + 1, value);  // not started
    const AllocJob& job = instance.jobs[j];
    for (int g = 0; g < instance.groups(); ++g) {
      if (job.MayUse(g)) spread(j, g, 0, job.gpus, value + job.ValueIn(g));
    }
  };
  job_step(0, 0.0);
  return best;
}

TEST(BatchAllocation, IntegerProgramMatchesBruteForceOnTinyInstances) {
  for (BatchInstance instance : RandomInstances(11, 60, 4)) {
    for (AllocJob& job : instance.jobs) job.gpus = std::min(job.gpus, 5);
    for (AllocNode& node : instance.nodes) node.free = std::min(node.free, 4);
    const auto exact = ExactAllocate(instance, 30);
    ASSERT_TRUE(exact.has_value());
    EXPECT_EQ(CheckBatchSolution(instance, *exact), "");
    EXPECT_NEAR(exact->value, BruteForce(instance), 1e-9);
  }
}

TEST(BatchAllocation, DynamicProgramEqualsTheOptimumOnOneDimensionalInstances) {
  int checked = 0;
  for (BatchInstance instance : RandomInstances(23, 120, 10)) {
    for (AllocNode& node : instance.nodes) node.group = 0;
    for (AllocJob& job : instance.jobs) job.limits = NodeLimits{};
    ASSERT_TRUE(IsOneDimensional(instance));
    const auto dp = DpAllocate(instance);
    const auto exact = ExactAllocate(instance, 30);
    ASSERT_TRUE(dp.has_value());
    ASSERT_TRUE(exact.has_value());
    EXPECT_EQ(CheckBatchSolution(instance, *dp), "");
    EXPECT_NEAR(dp->value, exact->value, 1e-9 * std::max(1.0, exact->value));
    ++checked;
  }
  EXPECT_EQ(checked, 120);
}

TEST(BatchAllocation, HeuristicsAreFeasibleAndTheGeneticAlgorithmIsWithinTwoPercentOnAverage) {
  double ratio_sum = 0;
  double worst = 1;
  int instances = 0;
  for (const BatchInstance& instance : RandomInstances(47, 150, 8)) {
    const auto exact = ExactAllocate(instance, 30);
    ASSERT_TRUE(exact.has_value());
    const BatchSolution greedy = GreedyAllocate(instance);
    const BatchSolution ga = GeneticAllocate(instance, GeneticOptions{});
    EXPECT_EQ(CheckBatchSolution(instance, greedy), "");
    EXPECT_EQ(CheckBatchSolution(instance, ga), "");
    EXPECT_LE(greedy.value, exact->value + 1e-9);
    EXPECT_LE(ga.value, exact->value + 1e-9);
    EXPECT_GE(ga.value, greedy.value - 1e-9);  // its first individual is the greedy order
    if (exact->value > 0) {
      const double ratio = ga.value / exact->value;
      ratio_sum += ratio;
      worst = std::min(worst, ratio);
      ++instances;
    }
  }
  ASSERT_GT(instances, 100);
  EXPECT_GE(ratio_sum / instances, 0.98);
  EXPECT_GE(worst, 0.80);
}

// AllocateInOrder keeps each group's nodes in order of free GPUs as jobs take them; the rule it
// implements is "each job in turn, in its best-valued group first, on the nodes SpreadOverNodes
// picks from what is still free". That rule written out plainly: the two must agree.
TEST(BatchAllocation, InOrderAllocationIsSpreadOverNodesJobByJob) {
  std::mt19937 rng(23);
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int trial = 0; trial < 400; ++trial) {
    BatchInstance instance;
    const int nodes = uniform(1, 40);
    const int groups = uniform(1, 3);
    for (int i = 0; i < nodes; ++i)
      instance.nodes.push_back({uniform(0, 8), uniform(0, groups - 1)});
    instance.group_count = groups;
    const int jobs = uniform(1, 30);
    for (int j = 0; j < jobs; ++j) {
      AllocJob job;
      job.gpus = uniform(1, 16);
      job.value = 1;
      if (uniform(0, 1) == 0) {
        for (int g = 0; g < groups; ++g) job.value_in_group.push_back(uniform(-1, 3));
      }
      if (uniform(0, 3) == 0) {
        job.limits.data_nodes = {uniform(0, nodes - 1)};
        job.limits.alpha = uniform(1, 4) / 4.0;
      }
      if (uniform(0, 3) == 0) job.limits.max_nodes = uniform(1, 3);
      instance.jobs.push_back(job);
    }
    std::vector<int> order(jobs);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);

    std::vector<std::vector<std::pair<int, int>>> expected(jobs);
    std::vector<int> free(nodes);
    for (int i = 0; i < nodes; ++i) free[i] = instance.nodes[i].free;
    for (int j : order) {
      const AllocJob& job = instance.jobs[j];
      std::vector<int> tried(groups);
      std::iota(tried.begin(), tried.end(), 0);
      std::stable_sort(tried.begin(), tried.end(),
                       [&](int a, int b) { return job.ValueIn(a) > job.ValueIn(b); });
      for (int g : tried) {
        if (!job.MayUse(g)) continue;
        std::vector<NodeOffer> offers;
        for (int i = 0; i < nodes; ++i) {
          if (instance.nodes[i].group == g && free[i] > 0) {
            offers.push_back({i, free[i], job.limits.IsDataNode(i)});
          }
        }
        const int need =
            job.limits.data_nodes.empty() ? 0 : LocalityNeed(job.limits.alpha, job.gpus);
        expected[j] = SpreadOverNodes(offers, job.gpus, need, job.limits.max_nodes);
        if (!expected[j].empty()) break;
      }
      for (const auto& [node, gpus] : expected[j]) free[node] -= gpus;
    }
    const BatchSolution solution = AllocateInOrder(instance, order);
    ASSERT_EQ(solution.placement, expected) << "trial " << trial;
    ASSERT_EQ(CheckBatchSolution(instance, solution), "") << "trial " << trial;
  }
}

}  // namespace
}  // namespace clustersim
