// Batch allocation under capacity, integrity, group, locality and node-count constraints: the
// constraint arithmetic by hand, hand-worked instances, the exact integer program against an
// independent brute force, the knapsack DP against the integer program where it applies, and the
// genetic algorithm's gap to the optimum on seeded small instances.
#include "sim/alloc/batch_allocation.h"

#include <gtest/gtest.h>

#include <functional>
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

}  // namespace
}  // namespace clustersim
