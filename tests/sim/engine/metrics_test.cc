// Exact time integrals, fragmentation measures and summary figures on the first-fit schedule of
// engine_test.cc, computed by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "sim/engine/summary.h"
#include "sim/util/error.h"
#include "tests/test_util.h"

namespace clustersim {
namespace {

using testing::MakeJob;
using testing::Nodes;
using testing::TestSim;

// 2 nodes x 4 A100-80GB, fcfs + first-fit, runtime trace. The schedule (engine_test.cc):
//   A [0,5] 3 GPUs node 0; B [0,100] 2 GPUs node 1; C [6,106] 2 GPUs node 0; D waits [7,100),
//   runs [100,110] 4 GPUs node 1.
// Busy GPUs: [0,5) 5, [5,6) 2, [6,100) 4, [100,106) 6, [106,110) 4.
// Busy GPU-seconds: 25 + 2 + 376 + 36 + 16 = 455 (= A 15 + B 200 + C 200 + D 40).
class FirstFitScheduleMetrics : public ::testing::Test {
 protected:
  FirstFitScheduleMetrics()
      : sim_(Nodes(2, 4),
             {MakeJob("A", 0, 3, 5), MakeJob("B", 0, 2, 100), MakeJob("C", 6, 2, 100),
              MakeJob("D", 7, 4, 10)},
             "fcfs", "first-fit", Options()) {
    sim_.Run();
    summary_ = ComputeSummary(sim_.engine());
  }
  static EngineOptions Options() {
    EngineOptions o;
    o.timeseries_interval_seconds = 50;
    return o;
  }
  double Value(const std::string& metric) { return SummaryValue(summary_, metric); }

  TestSim sim_;
  std::vector<SummaryRow> summary_;
};

TEST_F(FirstFitScheduleMetrics, BusyGpuSecondsAndUtilizationAreExactIntegrals) {
  const Metrics& m = sim_.engine().metrics();
  EXPECT_DOUBLE_EQ(m.busy_gpu_seconds(), 455);
  EXPECT_DOUBLE_EQ(m.start_time(), 0);
  EXPECT_DOUBLE_EQ(m.last_time(), 110);
  EXPECT_NEAR(Value("gpu_utilization"), 455.0 / (8 * 110), 1e-12);
  EXPECT_NEAR(Value("busy_gpu_hours"), 455.0 / 3600, 1e-12);
}

TEST_F(FirstFitScheduleMetrics, QueueStrandedAndIfragIntegrateOverTheWaitOfD) {
  // D waits [7,100) = 93 s: queue length 1. Idle GPUs then: 8 - 4 = 4 >= D's 4, so all 4 are
  // stranded. Each node has 2 free < min(4, 4) needed: I_frag = 4/4 = 1. Zero otherwise.
  const Metrics& m = sim_.engine().metrics();
  EXPECT_DOUBLE_EQ(m.queue_length_seconds(), 93);
  EXPECT_DOUBLE_EQ(m.stranded_gpu_seconds(), 4 * 93);
  EXPECT_DOUBLE_EQ(m.i_frag_seconds(), 93);
  EXPECT_NEAR(Value("stranded_gpus_mean"), 372.0 / 110, 1e-12);
  EXPECT_NEAR(Value("i_frag_mean"), 93.0 / 110, 1e-12);
}

TEST_F(FirstFitScheduleMetrics, NodeImbalanceFollowsItsFormula) {
  // Single-node jobs only: per node (u, u, u, 0) with u = busy/4, whose population standard
  // deviation is sqrt(3)/4 u. F = mean over the 2 nodes, so integral F dt =
  // sqrt(3)/4 * (1/2) * integral (busy0 + busy1)/4 dt = sqrt(3)/32 * 455.
  EXPECT_NEAR(sim_.engine().metrics().node_imbalance_seconds(), std::sqrt(3.0) / 32 * 455, 1e-9);
}

TEST_F(FirstFitScheduleMetrics, EnergyAndCostFollowFromBusyAndIdleTime) {
  // A100-80GB: 400 W busy, 50 W idle, $5.12 per GPU-hour.
  // Energy = 455 * 400 + (8 * 110 - 455) * 50 = 182,000 + 21,250 = 203,250 J.
  EXPECT_NEAR(Value("energy_kwh"), 203250 / 3.6e6, 1e-12);
  EXPECT_NEAR(Value("cost_usd"), 8 * 5.12 * 110 / 3600, 1e-9);
  EXPECT_NEAR(Value("used_cost_usd"), 455 * 5.12 / 3600, 1e-9);
}

TEST_F(FirstFitScheduleMetrics, JobDistributionsMatchTheSchedule) {
  // JCTs: A 5, B 100, C 100, D 103 -> mean 77; waits: 0, 0, 0, 93 -> mean 23.25.
  EXPECT_DOUBLE_EQ(Value("jct_seconds_mean"), 77);
  EXPECT_DOUBLE_EQ(Value("wait_seconds_mean"), 23.25);
  // p50 of sorted JCTs {5, 100, 100, 103} by linear interpolation: rank 1.5 -> 100.
  EXPECT_DOUBLE_EQ(Value("jct_seconds_p50"), 100);
  // p95: rank 0.95 * 3 = 2.85 -> 100 + 0.85 * 3 = 102.55.
  EXPECT_NEAR(Value("jct_seconds_p95"), 102.55, 1e-12);
  EXPECT_DOUBLE_EQ(Value("makespan_seconds"), 110);
  EXPECT_NEAR(Value("throughput_jobs_per_hour"), 4 / (110.0 / 3600), 1e-9);
  // Slowdown = JCT / run time: A 1, B 1, C 1, D 103 / 10 = 10.3 -> mean 3.325.
  EXPECT_NEAR(Value("slowdown_mean"), 3.325, 1e-12);
}

TEST_F(FirstFitScheduleMetrics, TimeseriesRowsAreExactIntervalAverages) {
  // Interval 50 s: [0,50), [50,100), [100,110). Busy GPU-seconds in [0,50): 25 + 2 + 44*4 = 203;
  // in [50,100): 200; in [100,110): 36 + 16 = 52.
  const auto& rows = sim_.engine().metrics().rows();
  std::vector<const TimeseriesRow*> all;
  for (const auto& r : rows) {
    if (r.gpu_type < 0) all.push_back(&r);
  }
  ASSERT_EQ(all.size(), 3u);
  EXPECT_DOUBLE_EQ(all[0]->busy_gpus, 203.0 / 50);
  EXPECT_DOUBLE_EQ(all[1]->busy_gpus, 200.0 / 50);
  EXPECT_DOUBLE_EQ(all[2]->t_end, 110);
  EXPECT_DOUBLE_EQ(all[2]->busy_gpus, 52.0 / 10);
  // Queue: D waits [7,50) in the first interval (43 s) and [50,100) in the second.
  EXPECT_DOUBLE_EQ(all[0]->queue_length, 43.0 / 50);
  EXPECT_DOUBLE_EQ(all[1]->queue_length, 1.0);
  EXPECT_DOUBLE_EQ(all[2]->queue_length, 0.0);
  // Power in [100,110): 5.2 busy x 400 W + 2.8 idle x 50 W = 2,220 W.
  EXPECT_NEAR(all[2]->power_watts, 5.2 * 400 + 2.8 * 50, 1e-9);
}

TEST(Summary, JainIndexOfEqualSharesIsOneAndOfOneHogIsOneOverN) {
  EXPECT_DOUBLE_EQ(JainIndex({3, 3, 3}), 1.0);
  EXPECT_DOUBLE_EQ(JainIndex({5, 0, 0, 0}), 0.25);
  // (1 + 3)^2 / (2 * (1 + 9)) = 16 / 20.
  EXPECT_DOUBLE_EQ(JainIndex({1, 3}), 0.8);
}

TEST(Summary, JainIndexIsOverUsersGpuSeconds) {
  // 1 node x 2 GPUs: user u1 runs 2 GPUs x 10 s = 20 GPU-s, u2 runs 1 GPU x 10 s = 10 GPU-s.
  // Jain = 30^2 / (2 * (400 + 100)) = 0.9.
  auto a = MakeJob("a", 0, 2, 10);
  a.user = "u1";
  auto b = MakeJob("b", 0, 1, 10);
  b.user = "u2";
  TestSim sim(Nodes(1, 2), {a, b});
  sim.Run();
  EXPECT_DOUBLE_EQ(SummaryValue(ComputeSummary(sim.engine()), "jain_index_users"), 0.9);
}

}  // namespace
}  // namespace clustersim

namespace clustersim {
namespace {

TEST(Summary, PercentilesInterpolateBetweenClosestRanks) {
  // Sorted {1, 2, 3, 4, 10}: p50 rank 2 -> 3; p95 rank 3.8 -> 4 + 0.8 * 6 = 8.8; p0 = 1.
  std::vector<double> v = {10, 3, 1, 4, 2};
  EXPECT_DOUBLE_EQ(Percentile(v, 0.5), 3);
  EXPECT_DOUBLE_EQ(Percentile(v, 0.95), 8.8);
  EXPECT_DOUBLE_EQ(Percentile(v, 0.0), 1);
  EXPECT_DOUBLE_EQ(Percentile(v, 1.0), 10);
  std::vector<double> one = {7};
  EXPECT_DOUBLE_EQ(Percentile(one, 0.99), 7);
}

}  // namespace
}  // namespace clustersim

// Metrics driven directly (no engine): GPU shares, reported memory, F_mem and FGD.
namespace clustersim {
namespace {

constexpr double kGib = 1024.0 * 1024.0 * 1024.0;

class DirectMetrics : public ::testing::Test {
 protected:
  explicit DirectMetrics(const std::string& spec = testing::Nodes(1, 2, "V100-16GB"))
      : cluster_(ClusterSpec::FromJsonText(spec, "m", HardwareCatalog::Default()),
                 HardwareCatalog::Default()),
        resources_(cluster_),
        metrics_(cluster_, 100) {}
  Allocation On(std::vector<int> gpus, int milli = 0) {
    Allocation a;
    a.gpu_type = cluster_.node(0).gpu_type;
    a.gpus = std::move(gpus);
    a.milli = milli;
    return a;
  }
  const TimeseriesRow& AllRow() const {
    for (const TimeseriesRow& row : metrics_.rows()) {
      if (row.gpu_type < 0) return row;
    }
    throw std::logic_error("no whole-cluster row");
  }
  const TimeseriesRow& TypeRow() const {
    for (const TimeseriesRow& row : metrics_.rows()) {
      if (row.gpu_type >= 0) return row;
    }
    throw std::logic_error("no per-type row");
  }

  Cluster cluster_;
  Resources resources_;
  Metrics metrics_;
};

TEST_F(DirectMetrics, FmemFollowsReportedMemoryPerGpu) {
  // Two GPUs of 16 GiB holding 4 and 10 GiB: free 12 and 6. F_mem = 1 - 12/18 = 1/3.
  metrics_.set_memory_reported(true);
  metrics_.AdvanceTo(0);
  EXPECT_DOUBLE_EQ(metrics_.f_mem_now(), 1 - 16.0 / 32);  // empty: 1 - one GPU / both
  metrics_.OnAllocate(On({0}));
  metrics_.OnAllocate(On({1}));
  EXPECT_DOUBLE_EQ(metrics_.memory_used_gib_now(), 0);  // reported: nothing placed yet
  metrics_.OnGpuMemory(0, 4 * kGib);
  metrics_.OnGpuMemory(1, 10 * kGib);
  EXPECT_DOUBLE_EQ(metrics_.f_mem_now(), 1 - 12.0 / 18);
  metrics_.Finish(10);
  EXPECT_DOUBLE_EQ(metrics_.f_mem_seconds(), 10 * (1 - 12.0 / 18));
  EXPECT_DOUBLE_EQ(metrics_.memory_used_gib_seconds(), 140);
  EXPECT_DOUBLE_EQ(AllRow().memory_utilization, 14.0 / 32);
  EXPECT_DOUBLE_EQ(TypeRow().memory_utilization, 14.0 / 32);
  EXPECT_DOUBLE_EQ(AllRow().f_mem, 1 - 12.0 / 18);
  EXPECT_LT(TypeRow().f_mem, 0);             // whole-cluster rows only
  EXPECT_LT(AllRow().fgd_fragmentation, 0);  // no workload given: not tracked
  // Removing more than was placed is a bug.
  EXPECT_THROW(metrics_.OnGpuMemory(0, -5 * kGib), InternalError);
}

TEST_F(DirectMetrics, MemoryCannotBeReportedUnlessAskedFor) {
  EXPECT_THROW(metrics_.OnGpuMemory(0, kGib), InternalError);
  metrics_.OnAllocate(On({0}));
  EXPECT_THROW(metrics_.set_memory_reported(true), InternalError);
}

TEST_F(DirectMetrics, AShareCountsAsItsFractionOfABusyGpuAndOfItsMemory) {
  // 250 milli of GPU 0 for 8 s: 0.25 busy GPU, 4 GiB of 16 held; free memory 12 and 16 GiB:
  // F_mem = 1 - 16/28 = 3/7. Node imbalance sqrt(3)/4 x (0.25 / 2 GPUs).
  metrics_.AdvanceTo(0);
  metrics_.OnAllocate(On({0}, 250));
  EXPECT_DOUBLE_EQ(metrics_.busy_gpus_now(), 0.25);
  EXPECT_DOUBLE_EQ(metrics_.f_mem_now(), 1 - 16.0 / 28);
  metrics_.AdvanceTo(8);
  metrics_.OnRelease(On({0}, 250));
  metrics_.Finish(8);
  EXPECT_DOUBLE_EQ(metrics_.busy_gpu_seconds(), 2);
  EXPECT_DOUBLE_EQ(metrics_.memory_used_gib_seconds(), 32);
  EXPECT_NEAR(metrics_.node_imbalance_seconds(), 8 * std::sqrt(3.0) / 4 * 0.125, 1e-12);
  const GpuSpec& gpu = cluster_.catalog().gpu(cluster_.node(0).gpu_type);
  EXPECT_NEAR(metrics_.energy_joules(), 2 * gpu.tdp_watts + (16 - 2) * gpu.idle_watts, 1e-9);
  EXPECT_DOUBLE_EQ(AllRow().utilization, 2.0 / 16);
  EXPECT_DOUBLE_EQ(metrics_.busy_gpus_now(), 0);
}

class FgdMetrics : public DirectMetrics {
 protected:
  FgdMetrics() : DirectMetrics(testing::Nodes(1, 4)) {}
};

TEST_F(FgdMetrics, ExpectedFragmentationIsTimeAveragedAndFollowsFailures) {
  // Workload: 500-milli tasks. 600 milli of GPU 0 taken: {400, 1000, 1000, 1000}: fragment 400 of
  // 3400 idle. A failure then takes GPU 1 out: 400 of 2400.
  metrics_.set_resources(&resources_);
  metrics_.SetWorkload({{1, 500, 1.0}});
  EXPECT_TRUE(metrics_.fgd_enabled());
  metrics_.AdvanceTo(0);
  resources_.AllocateShare(0, 600);
  metrics_.OnAllocate(On({0}, 600));
  EXPECT_DOUBLE_EQ(metrics_.fgd_fragmentation_now(), 400.0 / 3400);
  // A100-80GB: GPU 0 holds 0.6 x 80 = 48 GiB: free {32, 80, 80, 80}.
  EXPECT_DOUBLE_EQ(metrics_.f_mem_now(), 1 - 80.0 / 272);
  metrics_.AdvanceTo(10);
  const int failed[] = {1};
  resources_.Allocate(failed);
  metrics_.OnNodeChanged(0);
  EXPECT_DOUBLE_EQ(metrics_.fgd_fragmentation_now(), 400.0 / 2400);
  EXPECT_DOUBLE_EQ(metrics_.f_mem_now(), 1 - 80.0 / 192);  // the failed GPU has no free memory
  metrics_.Finish(20);
  EXPECT_DOUBLE_EQ(metrics_.fgd_fragmentation_seconds(), 10 * 400.0 / 3400 + 10 * 400.0 / 2400);
  EXPECT_DOUBLE_EQ(metrics_.fgd_fragmented_gpu_seconds(), 20 * 0.4);
  EXPECT_DOUBLE_EQ(AllRow().fgd_fragmentation, (400.0 / 3400 + 400.0 / 2400) / 2);
  EXPECT_DOUBLE_EQ(AllRow().fgd_fragmented_gpus, 0.4);
}

TEST_F(FgdMetrics, WorkloadNeedsTheResources) {
  EXPECT_THROW(metrics_.SetWorkload({{1, 500, 1.0}}), InternalError);
}

}  // namespace
}  // namespace clustersim
