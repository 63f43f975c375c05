// FGD's fragmentation measure (sim/engine/fragmentation.h), computed by hand.
#include "sim/engine/fragmentation.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <span>

#include "sim/engine/resources.h"
#include "tests/test_util.h"

namespace clustersim {
namespace {

// A node of 4 GPUs with free milli {1000, 1000, 500, 200}: idle 2700.
const std::vector<int> kNode = {1000, 1000, 500, 200};

TEST(ClassFragment, FractionalTaskThatFitsLeavesTheGpusBelowItsShare) {
  // 300 milli fits (a GPU has >= 300 free); only the 200-milli GPU is below 300.
  EXPECT_EQ(ClassFragment(kNode, TaskClass{1, 300, 1}), 200);
  // 600 milli fits; the 500 and 200 GPUs are below 600.
  EXPECT_EQ(ClassFragment(kNode, TaskClass{1, 600, 1}), 700);
}

TEST(ClassFragment, WholeGpuTaskThatFitsLeavesThePartlyUsedGpus) {
  // One whole GPU fits (2 completely free); the leftovers 500 + 200 cannot hold it.
  EXPECT_EQ(ClassFragment(kNode, TaskClass{1, 0, 1}), 700);
  EXPECT_EQ(ClassFragment(kNode, TaskClass{2, 0, 1}), 700);
}

TEST(ClassFragment, TaskThatDoesNotFitMakesAllIdleCapacityAFragment) {
  EXPECT_EQ(ClassFragment(kNode, TaskClass{3, 0, 1}), 2700);  // 3 whole GPUs, 2 free
  // Larger than the node: counted with its per-node demand min(8, 4) = 4, which does not fit.
  EXPECT_EQ(ClassFragment(kNode, TaskClass{8, 0, 1}), 2700);
  // ... but an empty node would be taken whole by it: no fragment.
  const std::vector<int> empty = {1000, 1000, 1000, 1000};
  EXPECT_EQ(ClassFragment(empty, TaskClass{8, 0, 1}), 0);
  // A fractional task larger than every GPU's leftover.
  const std::vector<int> shared = {400, 300, 0, 0};
  EXPECT_EQ(ClassFragment(shared, TaskClass{1, 500, 1}), 700);
}

TEST(NodeFragmentation, IsTheWeightedSumOverClasses) {
  // 0.5 x 200 (300 milli) + 0.3 x 700 (1 GPU) + 0.2 x 2700 (3 GPUs) = 100 + 210 + 540 = 850.
  const std::vector<TaskClass> classes = {{1, 300, 0.5}, {1, 0, 0.3}, {3, 0, 0.2}};
  EXPECT_DOUBLE_EQ(NodeFragmentation(kNode, classes), 850);
  // A full node and an empty node (of tasks that fit) have no fragment.
  EXPECT_EQ(NodeFragmentation(std::vector<int>{0, 0, 0, 0}, classes), 0);
  EXPECT_EQ(NodeFragmentation(std::vector<int>{1000, 1000, 1000, 1000}, classes), 0);
}

// A node of 1 to 8 GPUs, each with free milli drawn from `values`.
std::vector<int> RandomNode(std::mt19937& rng, std::span<const int> values) {
  std::vector<int> node(1 + rng() % 8);
  for (int& f : node) f = values[rng() % values.size()];
  return node;
}

TEST(NodeFragmentationView, AfterChangeEqualsRecomputingTheNode) {
  std::mt19937 rng(7);
  const int values[] = {0, 100, 250, 400, 500, 700, 999, 1000};
  for (int trial = 0; trial < 300; ++trial) {
    const std::vector<int> node = RandomNode(rng, values);
    std::vector<TaskClass> classes;
    const int count = 1 + static_cast<int>(rng() % 5);
    for (int c = 0; c < count; ++c) {
      classes.push_back(rng() % 2 ? TaskClass{1, values[1 + rng() % 6], 1.0 / count}
                                  : TaskClass{1 + static_cast<int>(rng() % 10), 0, 1.0 / count});
    }
    const NodeFragmentationView view(node, classes);
    EXPECT_EQ(view.current(), NodeFragmentation(node, classes));
    const size_t i = rng() % node.size();
    const int to = static_cast<int>(rng() % (node[i] + 1));
    std::vector<int> changed = node;
    changed[i] = to;
    EXPECT_EQ(view.AfterChange(node[i], to), NodeFragmentation(changed, classes))
        << "trial " << trial;
  }
}

TEST(NodeFragmentationView, AfterTakeEqualsRecomputingTheNodeWithItsCpus) {
  // Taking k wholly free GPUs (each to 0) and setting the node's free CPUs: the view's answer
  // against NodeFragmentation on the changed node, bit for bit, over random nodes, classes (GPU
  // shares, whole GPUs, single-node classes larger than the node, CPU-only) and CPU demands.
  std::mt19937 rng(11);
  const int values[] = {0, 100, 250, 400, 500, 700, 999, 1000, 1000, 1000};
  for (int trial = 0; trial < 2000; ++trial) {
    const std::vector<int> node = RandomNode(rng, values);
    std::vector<TaskClass> classes;
    const int count = 1 + static_cast<int>(rng() % 6);
    for (int c = 0; c < count; ++c) {
      const int cpu = rng() % 3 == 0 ? 0 : 1000 * static_cast<int>(1 + rng() % 16);
      switch (rng() % 4) {
        case 0:
          classes.push_back(TaskClass{1, values[1 + rng() % 6], 1.0 / count, cpu});
          break;
        case 1:
          classes.push_back(TaskClass{0, 0, 1.0 / count, cpu});
          break;
        default: {
          TaskClass task{1 + static_cast<int>(rng() % 10), 0, 1.0 / count, cpu};
          task.single_node = rng() % 2 == 0;
          classes.push_back(task);
        }
      }
    }
    const bool limited = rng() % 4 != 0;
    const NodeCpu cpu =
        limited ? NodeCpu{static_cast<int64_t>(rng() % 33) * 1000, 32000} : NodeCpu{};
    const NodeFragmentationView view(node, classes, cpu);
    ASSERT_EQ(view.current(), NodeFragmentation(node, classes, cpu)) << "trial " << trial;
    const int full = static_cast<int>(std::count(node.begin(), node.end(), 1000));
    const int take = static_cast<int>(rng() % (full + 1));
    const int64_t cpu_after = limited ? static_cast<int64_t>(rng() % 33) * 1000 : -1;
    std::vector<int> changed = node;
    for (int i = 0, left = take; left > 0; ++i) {
      if (changed[i] == 1000) {
        changed[i] = 0;
        --left;
      }
    }
    NodeCpu after = cpu;
    if (limited) after.free_milli = cpu_after;
    EXPECT_EQ(view.AfterTake(take, cpu_after), NodeFragmentation(changed, classes, after))
        << "trial " << trial << ", take " << take;
  }
}

Job SizedJob(int gpus, int milli) {
  Job job = testing::MakeJob("j", 0, gpus, 1);
  job.gpu_milli = milli;
  return job;
}

Trace SizedTrace() {
  Trace trace;
  for (int i = 0; i < 4; ++i) trace.jobs.push_back(SizedJob(1, 500));
  for (int i = 0; i < 3; ++i) trace.jobs.push_back(SizedJob(1, 0));
  for (int i = 0; i < 2; ++i) trace.jobs.push_back(SizedJob(8, 0));
  trace.jobs.push_back(SizedJob(1, 250));
  trace.jobs.push_back(SizedJob(2, 0));
  trace.jobs.push_back(SizedJob(0, 0));  // CPU only: not a GPU task
  return trace;
}

TEST(WorkloadClasses, CountsRequestSizesMostFrequentFirst) {
  const auto classes = WorkloadClasses(SizedTrace());
  ASSERT_EQ(classes.size(), 5u);
  // 11 GPU jobs. Counts 4, 3, 2, 1, 1; the two 1s in order (1 GPU, 250) before (2 GPUs).
  const std::vector<std::tuple<int, int, double>> expected = {
      {1, 500, 4 / 11.0}, {1, 0, 3 / 11.0}, {8, 0, 2 / 11.0}, {1, 250, 1 / 11.0}, {2, 0, 1 / 11.0}};
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(classes[i].gpus, std::get<0>(expected[i])) << i;
    EXPECT_EQ(classes[i].milli, std::get<1>(expected[i])) << i;
    EXPECT_DOUBLE_EQ(classes[i].weight, std::get<2>(expected[i])) << i;
  }
}

TEST(WorkloadClasses, FoldsTheTailIntoTheNearestKeptSize) {
  // Kept: 500 milli, 1 GPU (1000), 8 GPUs (8000). Tail: 250 milli -> nearest 500 (distance 250);
  // 2 GPUs (2000) -> nearest 1 GPU (distance 1000; 8000 is 6000 away). Weights keep every job.
  const auto classes = WorkloadClasses(SizedTrace(), 3);
  ASSERT_EQ(classes.size(), 3u);
  EXPECT_EQ(classes[0].milli, 500);
  EXPECT_DOUBLE_EQ(classes[0].weight, 5 / 11.0);
  EXPECT_EQ(classes[1].gpus, 1);
  EXPECT_EQ(classes[1].milli, 0);
  EXPECT_DOUBLE_EQ(classes[1].weight, 4 / 11.0);
  EXPECT_EQ(classes[2].gpus, 8);
  EXPECT_DOUBLE_EQ(classes[2].weight, 2 / 11.0);
}

TEST(WorkloadClasses, ATailHalfwayBetweenTwoSizesGoesToTheLargerOne) {
  Trace trace;
  for (int i = 0; i < 3; ++i) trace.jobs.push_back(SizedJob(1, 0));
  for (int i = 0; i < 2; ++i) trace.jobs.push_back(SizedJob(3, 0));
  trace.jobs.push_back(SizedJob(2, 0));  // 2000: 1000 from both 1000 and 3000
  const auto classes = WorkloadClasses(trace, 2);
  ASSERT_EQ(classes.size(), 2u);
  EXPECT_EQ(classes[0].gpus, 1);
  EXPECT_DOUBLE_EQ(classes[0].weight, 0.5);
  EXPECT_EQ(classes[1].gpus, 3);
  EXPECT_DOUBLE_EQ(classes[1].weight, 0.5);
}

TEST(WorkloadClasses, WithoutSharingAFractionalRequestIsOneWholeGpu) {
  const auto classes = WorkloadClasses(SizedTrace(), 32, /*fractional=*/false);
  ASSERT_EQ(classes.size(), 3u);  // (1 GPU) 8, (8 GPUs) 2, (2 GPUs) 1
  EXPECT_EQ(classes[0].gpus, 1);
  EXPECT_EQ(classes[0].milli, 0);
  EXPECT_DOUBLE_EQ(classes[0].weight, 8 / 11.0);
  EXPECT_TRUE(WorkloadClasses(Trace{}).empty());
}

TEST(FgdTracker, FollowsTheResourcesNodeByNode) {
  const Cluster cluster(
      ClusterSpec::FromJsonText(testing::Nodes(2, 4), "c", HardwareCatalog::Default()),
      HardwareCatalog::Default());
  Resources resources(cluster);
  FgdTracker tracker(cluster, {{1, 500, 0.5}, {2, 0, 0.5}});
  EXPECT_EQ(tracker.total(), 0);
  EXPECT_EQ(tracker.idle_milli(), 8000);
  // Node 0: GPU 0 keeps 400 milli, GPUs 1 and 2 held whole: {400, 0, 0, 1000}.
  resources.AllocateShare(0, 600);
  const int whole[] = {1, 2};
  resources.Allocate(whole);
  tracker.NodeChanged(0, resources);
  // 500 milli fits (GPU 3), 400 below: 0.5 x 400; 2 GPUs do not fit: 0.5 x 1400. Total 900.
  EXPECT_DOUBLE_EQ(tracker.node_value(0), 900);
  EXPECT_DOUBLE_EQ(tracker.total(), 900);
  EXPECT_EQ(tracker.idle_milli(), 1400 + 4000);
  resources.ReleaseShare(0, 600);
  resources.Release(whole);
  tracker.NodeChanged(0, resources);
  EXPECT_DOUBLE_EQ(tracker.total(), 0);
  EXPECT_EQ(tracker.idle_milli(), 8000);
}

// The paper's classes (PaperTaskClasses): 20 jobs, 10 shares of 500 milli, 6 CPU-only, 3 of 2
// GPUs, 1 of 8 GPUs. Kept until they cover 95 % of the jobs: 10 + 6 + 3 = 19 of 20, so the
// 8-GPU class is cut and the weights are 10/19, 6/19, 3/19.
TEST(PaperTaskClasses, KeepsTheMostFrequentUpTo95PercentWithCpuOnlyClasses) {
  Trace trace;
  auto add = [&](int count, int gpus, int milli) {
    for (int i = 0; i < count; ++i) {
      Job job = testing::MakeJob("j", 0, gpus, 1);
      job.gpu_milli = milli;
      trace.jobs.push_back(job);
    }
  };
  add(10, 1, 500);
  add(6, 0, 0);
  add(3, 2, 0);
  add(1, 8, 0);
  const std::vector<TaskClass> classes = PaperTaskClasses(trace);
  ASSERT_EQ(classes.size(), 3u);
  EXPECT_EQ(classes[0].milli, 500);
  EXPECT_DOUBLE_EQ(classes[0].weight, 10.0 / 19);
  EXPECT_EQ(classes[1].gpus, 0);
  EXPECT_DOUBLE_EQ(classes[1].weight, 6.0 / 19);
  EXPECT_EQ(classes[2].gpus, 2);
  EXPECT_DOUBLE_EQ(classes[2].weight, 3.0 / 19);
  for (const TaskClass& c : classes) EXPECT_TRUE(c.single_node);
  // On a node of 2 GPUs with {1000, 300} free (idle 1300): the share fits and leaves 300; the
  // CPU-only class finds all 1300 fragmented; 2 GPUs do not fit: 1300.
  // (10 x 300 + 6 x 1300 + 3 x 1300) / 19 = 14700 / 19.
  const std::vector<int> node = {1000, 300};
  EXPECT_DOUBLE_EQ(NodeFragmentation(node, classes), 14700.0 / 19);
  const NodeFragmentationView view(node, classes);
  EXPECT_DOUBLE_EQ(view.current(), 14700.0 / 19);
}

TEST(ClassFragment, ACpuOnlyTaskFindsAllIdleGpuCapacityFragmentedEvenWithCpusFree) {
  TaskClass cpu_only{0, 0, 1.0, 4000};
  EXPECT_EQ(ClassFragment(kNode, cpu_only), 2700);
  EXPECT_EQ(ClassFragment(kNode, cpu_only, NodeCpu{64000, 64000}), 2700);
  EXPECT_EQ(ClassFragment(std::vector<int>{0, 0}, cpu_only), 0);
}

TEST(ClassFragment, ASingleNodeClassLargerThanTheNodeNeverFitsIt) {
  const std::vector<int> free_node = {1000, 1000, 1000, 1000};
  TaskClass eight{8, 0, 1.0};
  EXPECT_EQ(ClassFragment(free_node, eight), 0);  // folded: counted with its 4 GPUs per node
  eight.single_node = true;
  EXPECT_EQ(ClassFragment(free_node, eight), 4000);  // the paper's: a pod of 8 cannot use it
}

}  // namespace
}  // namespace clustersim
