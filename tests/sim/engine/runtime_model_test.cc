// Runtime models (docs/models.md#runtime-models), with rates worked out by hand from the catalog
// and topology.
#include "sim/engine/runtime_model.h"

#include <gtest/gtest.h>

#include "sim/util/error.h"
#include "tests/test_util.h"

namespace clustersim {
namespace {

struct Fixture {
  explicit Fixture(const std::string& spec)
      : cluster(ClusterSpec::Load(spec, HardwareCatalog::Default()), HardwareCatalog::Default()),
        topology(cluster) {}
  Allocation Gpus(int first, int count) const {
    Allocation a;
    a.gpu_type = cluster.node(cluster.NodeOfGpu(first)).gpu_type;
    for (int i = 0; i < count; ++i) a.gpus.push_back(first + i);
    return a;
  }
  Cluster cluster;
  Topology topology;
};

Job ModelJob(const std::string& model, int gpus) {
  Job job = testing::MakeJob("j", 0, gpus, 100);
  job.model = model;
  return job;
}

TEST(RuntimeModel, TraceModelRunsEveryJobAtItsTraceDuration) {
  Fixture f("dgx-h100");
  const auto model = MakeRuntimeModel("trace", f.cluster, f.topology);
  EXPECT_EQ(model->Rate(ModelJob("bert-large", 8), f.Gpus(0, 8)), 1.0);
}

TEST(RuntimeModel, ModelFamiliesComeFromTheModelName) {
  EXPECT_EQ(ModelFamilyOf("ResNet-50"), "cnn");
  EXPECT_EQ(ModelFamilyOf("bert-large"), "transformer");
  EXPECT_EQ(ModelFamilyOf("LLaMA-7B"), "transformer");
  EXPECT_EQ(ModelFamilyOf(""), "other");
}

TEST(RuntimeModel, OneGpuRunsAtTheCatalogSpeedupOverTheReference) {
  // One GPU has no communication: rate = t_c / (t_c / speedup) = speedup relative to V100-16GB.
  // H100-80GB transformer speedup 5.5 (catalog), V100 reference 1.0.
  Fixture f("dgx-h100");
  const auto model = MakeRuntimeModel("hardware", f.cluster, f.topology);
  EXPECT_NEAR(model->Rate(ModelJob("gpt2", 1), f.Gpus(0, 1)), 5.5, 1e-12);
  // CNN on H100: 3.4.
  EXPECT_NEAR(model->Rate(ModelJob("resnet50", 1), f.Gpus(0, 1)), 3.4, 1e-12);
}

TEST(RuntimeModel, DataParallelJobsPayARingAllReduceOnTheTopology) {
  // BERT-like transformer profile: t_c = 0.4 s, gradients 340e6 x 2 B = 680e6 B.
  // Ideal (the reference V100 NVLink, 300/2 = 150 GB/s per direction, 2 us per hop), n = 8:
  //   0.4 + 2 * 7/8 * 680e6 / 150e9 + 14 * 2e-6 = 0.4 + 0.00793333 + 0.000028 = 0.40796133 s.
  // 8 GPUs of one DGX A100 (A100-80GB transformer speedup 2.4, ring 300 GB/s, hop 0.7 us):
  //   0.4 / 2.4 + 2 * 7/8 * 680e6 / 300e9 + 14 * 0.7e-6 = 0.16666667 + 0.00396667 + 0.0000098
  //   = 0.17064313 s.  Rate = 0.40796133 / 0.17064313 = 2.390728.
  Fixture f("dgx-a100");
  const auto model = MakeRuntimeModel("hardware", f.cluster, f.topology);
  const double ideal = 0.4 + 2.0 * 7 / 8 * 680e6 / 150e9 + 14 * 2e-6;
  const double actual = 0.4 / 2.4 + 2.0 * 7 / 8 * 680e6 / 300e9 + 14 * 0.7e-6;
  EXPECT_NEAR(model->Rate(ModelJob("bert", 8), f.Gpus(0, 8)), ideal / actual, 1e-9);
  EXPECT_NEAR(ideal / actual, 2.390728, 1e-6);
  // The same job spread over two nodes (4 + 4 GPUs) is slower: the ring crosses the NICs.
  Allocation split;
  split.gpu_type = f.Gpus(0, 1).gpu_type;
  split.gpus = {0, 1, 2, 3, 8, 9, 10, 11};
  EXPECT_LT(model->Rate(ModelJob("bert", 8), split),
            model->Rate(ModelJob("bert", 8), f.Gpus(0, 8)));
}

TEST(RuntimeModel, UnknownModelNameListsTheValidOnes) {
  Fixture f("dgx-a100");
  try {
    MakeRuntimeModel("roofline", f.cluster, f.topology);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("trace, hardware"), std::string::npos);
  }
  try {
    MakeRuntimeModel("hardware:B300", f.cluster, f.topology);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown reference GPU type \"B300\""),
              std::string::npos)
        << e.what();
  }
}

// The reference is a setting: with hardware:A100-80GB, trace durations are A100 times, so one A100
// runs at rate 1 and one H100 at its transformer speedup over the A100, 5.5 / 2.4 (catalog).
// `hardware` alone takes the catalog's reference, V100-16GB; the label names it either way.
TEST(RuntimeModel, TheHardwareReferenceIsASettingAndTheLabelNamesIt) {
  Fixture a100("dgx-a100");
  const auto on_a100 = MakeRuntimeModel("hardware:a100-80gb", a100.cluster, a100.topology);
  EXPECT_NEAR(on_a100->Rate(ModelJob("gpt2", 1), a100.Gpus(0, 1)), 1.0, 1e-12);
  EXPECT_EQ(on_a100->Label(a100.cluster.catalog()), "hardware:A100-80GB");
  Fixture h100("dgx-h100");
  const auto reference = MakeRuntimeModel("hardware:A100-80GB", h100.cluster, h100.topology);
  EXPECT_NEAR(reference->Rate(ModelJob("gpt2", 1), h100.Gpus(0, 1)), 5.5 / 2.4, 1e-12);
  const auto fallback = MakeRuntimeModel("hardware", h100.cluster, h100.topology);
  EXPECT_EQ(fallback->Label(h100.cluster.catalog()), "hardware:V100-16GB");
  // Set after construction, as a run does once it has read the trace.
  fallback->SetReference(*h100.cluster.catalog().Find("A100-80GB"));
  EXPECT_NEAR(fallback->Rate(ModelJob("gpt2", 1), h100.Gpus(0, 1)), 5.5 / 2.4, 1e-12);
  EXPECT_EQ(MakeRuntimeModel("trace", h100.cluster, h100.topology)->Label(h100.cluster.catalog()),
            "trace");
}

// The trace's own GPU type: the one type every job naming a type names, alone.
TEST(RuntimeModel, TheTracesOwnGpuTypeIsTheOneEveryJobThatNamesATypeNames) {
  const HardwareCatalog& catalog = HardwareCatalog::Default();
  auto trace_of = [](std::vector<std::string> types) {
    Trace trace;
    for (size_t i = 0; i < types.size(); ++i) {
      Job job = testing::MakeJob("j" + std::to_string(i), 0, 1, 10);
      job.gpu_type = Symbol(types[i]);
      trace.jobs.push_back(job);
    }
    return trace;
  };
  EXPECT_EQ(TraceGpuType(trace_of({"A100-80GB", "", "A100-80GB"}), catalog),
            catalog.Find("A100-80GB"));
  EXPECT_EQ(TraceGpuType(trace_of({"", ""}), catalog), std::nullopt);
  EXPECT_EQ(TraceGpuType(trace_of({"A100-80GB", "H100-80GB"}), catalog), std::nullopt);
  EXPECT_EQ(TraceGpuType(trace_of({"A100-80GB|H100-80GB"}), catalog), std::nullopt);
}

}  // namespace
}  // namespace clustersim
