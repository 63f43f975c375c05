// The memory model (docs/models.md): hand computations for catalog models and the published
// out-of-memory bracket it must respect. Expected values are worked out in the comments, never
// taken from the program.
#include "sim/models/memory_model.h"

#include <gtest/gtest.h>

#include "sim/hardware/hardware.h"
#include "sim/models/model_catalog.h"

namespace clustersim {
namespace {

const GpuSpec& Gpu(const std::string& name) {
  const HardwareCatalog& c = HardwareCatalog::Default();
  return c.gpu(*c.Find(name));
}

const ModelEfficiency& Eff() { return ModelCatalog::Default().efficiency(); }

TEST(MemoryModel, MaxBatchIsTheFreeMemoryOverBytesPerSample) {
  // 16,000 MB GPU, 12,000 MB static, 1,600 MB reserved, 50 MB per sample:
  // floor((16000 - 12000 - 1600) / 50) = floor(2400 / 50) = 48.
  EXPECT_EQ(MaxBatch(16000e6, 12000e6, 1600e6, 50e6), 48);
  // One byte less free memory is one sample less.
  EXPECT_EQ(MaxBatch(16000e6 - 1, 12000e6, 1600e6, 50e6), 47);
  // Nothing fits when the static part alone exceeds the GPU.
  EXPECT_EQ(MaxBatch(16000e6, 15000e6, 1600e6, 50e6), 0);
}

TEST(MemoryModel, StateBytesPerParameterFollowTheReferenceStacks) {
  // Mixed precision + Adam: 16-bit weights 2 + FP32 gradients 4 + FP32 master 4 + m 4 + v 4 = 18.
  EXPECT_DOUBLE_EQ(StateBytesFor(Precision::kMixedBf16, Optimizer::kAdam).total(), 18);
  EXPECT_DOUBLE_EQ(StateBytesFor(Precision::kMixedFp16, Optimizer::kSgdMomentum).total(), 14);
  // FP32 (and TF32, FP32 storage) + Adam: 4 + 4 + 8 = 16; + SGD with momentum: 4 + 4 + 4 = 12.
  EXPECT_DOUBLE_EQ(StateBytesFor(Precision::kFp32, Optimizer::kAdam).total(), 16);
  EXPECT_DOUBLE_EQ(StateBytesFor(Precision::kTf32, Optimizer::kSgdMomentum).total(), 12);
}

TEST(MemoryModel, BertLargeOnA100By80GbRespectsThePublishedBracket) {
  // NVIDIA/DeepLearningExamples issue #1165: PyTorch BERT-large pre-training (sequence 128, mixed
  // precision) on an A100-80GB runs at batch 480 and runs out of memory at 512. By hand:
  //   state 340e6 x 18 = 6.12e9 B, x 1.01 (fragmentation) = 6.1812e9 B;
  //   per layer 34 s h = 34 x 128 x 1024 = 4,456,448 B and a s^2 (4 + 2 + 1) = 16 x 16,384 x 7 =
  //   1,835,008 B (FP32 softmax output, 16-bit dropout output, 1-byte mask): 6,291,456 x 24 =
  //   150,994,944 B; logits of the 15% masked positions 0.15 x 128 x 30,522 x (2 + 4) =
  //   3,516,134.4 B; k = 154,511,078.4 B, x 1.01 = 156,056,189.184 B;
  //   reserved (80 - 79.35 + 1.27) GiB = 2,061,584,302.08 B;
  //   B_max = floor((85,899,345,920 - 2,061,584,302.08 - 6,181,200,000) / 156,056,189.184)
  //         = floor(77,656,561,617.92 / 156,056,189.184) = floor(497.6) = 497.
  const ModelSpec& bert = ModelCatalog::Default().Require("BERT-large");
  const GpuSpec& a100 = Gpu("A100-80GB");
  const MemoryBreakdown m = MemoryPerGpu(bert, Eff(), {}, a100);
  EXPECT_DOUBLE_EQ(m.state_bytes(), 6.12e9);
  EXPECT_NEAR(m.activation_per_sample, 154511078.4, 1e-3);
  EXPECT_NEAR(m.reserved, 2061584302.08, 1e-3);
  const int64_t b_max = MaxBatch(m, GpuMemoryBytes(a100));
  EXPECT_EQ(b_max, 497);
  EXPECT_GE(b_max, 480);
  EXPECT_LT(b_max, 512);
}

TEST(MemoryModel, SequenceLengthAndPrecisionArePerJobSettings) {
  // BERT-large at sequence 512 in FP32: per layer 66 s h + 9 a s^2 = 66 x 524,288 + 9 x 16 x
  // 262,144 = 34,603,008 + 37,748,736 = 72,351,744 B, x 24 = 1,736,441,856 B; logits 0.15 x 512
  // x 30,522 x (4 + 4) = 18,752,716.8 B. Total 1,755,194,572.8 B.
  const ModelSpec& bert = ModelCatalog::Default().Require("BERT-large");
  JobSettings s;
  s.precision = Precision::kFp32;
  s.sequence_length = 512;
  EXPECT_NEAR(ActivationBytesPerSample(bert, s, Eff().FrameworkNamed("pytorch")), 1755194572.8,
              1e-3);
  // FP32 state: 16 B/param, 5.44e9 B.
  MemoryOptions o;
  o.settings = s;
  EXPECT_DOUBLE_EQ(MemoryPerGpu(bert, Eff(), {}, Gpu("V100-32GB"), o).state_bytes(), 5.44e9);
  // ResNet-50 at 448 px: four times the activations of 224 px.
  const ModelSpec& rn = ModelCatalog::Default().Require("ResNet-50");
  JobSettings big;
  big.sequence_length = 448;
  EXPECT_DOUBLE_EQ(ActivationBytesPerSample(rn, big, Eff().FrameworkNamed("pytorch")),
                   4 * rn.activation_bytes_per_sample);
}

TEST(MemoryModel, Llama7bNeedsTensorParallelTwoOnA100By80Gb) {
  // TP 1: the state alone is 6.7e9 x 18 = 120.6e9 B > 80 GiB. TP 2: state 60.3e9 x 1.01 =
  // 60.903e9 B; k = (34 x 32 x 2048 x 4096 + 2048 x 32,000 x 6) / 2 = (9,126,805,504 +
  // 393,216,000) / 2 = 4,760,010,752 B, x 1.01 = 4,807,610,859.52 B; B_max = floor((85.899e9 -
  // 2.0616e9 - 60.903e9) / 4.8076e9) = floor(4.35) = 4.
  const ModelSpec& llama = ModelCatalog::Default().Require("LLaMA-7B");
  const GpuSpec& a100 = Gpu("A100-80GB");
  EXPECT_EQ(MaxBatch(MemoryPerGpu(llama, Eff(), {1, 1}, a100), GpuMemoryBytes(a100)), 0);
  const MemoryBreakdown tp2 = MemoryPerGpu(llama, Eff(), {2, 1}, a100);
  EXPECT_DOUBLE_EQ(tp2.activation_per_sample, 4760010752.0);
  EXPECT_EQ(MaxBatch(tp2, GpuMemoryBytes(a100)), 4);
  const auto layout = MinimalModelParallelism(llama, Eff(), a100);
  ASSERT_TRUE(layout.has_value());
  EXPECT_EQ(layout->tensor, 2);
  EXPECT_EQ(layout->pipeline, 1);
}

TEST(MemoryModel, PipelineStagesKeepTheWholeDepthOnceAndTheLastTheLogits) {
  // LLaMA-13B, TP 2 x PP 4: the first stage keeps one micro-batch of all 40 layers (34 x 40 x
  // 2048 x 5120 = 14,260,633,600 B), more than the last stage's 14,260,633,600 / 4 + logits
  // 2048 x 32,000 x 6 = 3,565,158,400 + 393,216,000 B; k = 14,260,633,600 / TP 2.
  const ModelSpec& llama = ModelCatalog::Default().Require("LLaMA-13B");
  const MemoryBreakdown m = MemoryPerGpu(llama, Eff(), {2, 4}, Gpu("A100-80GB"));
  EXPECT_DOUBLE_EQ(m.activation_per_sample, 14260633600.0 / 2);
  // Model state by TP x PP = 8: 13e9 x 18 / 8 = 29.25e9 B; a distributed optimizer over 4
  // data-parallel ranks keeps a quarter of the 12 B/param optimizer state: 13e9 x (2 + 4 + 3) / 8.
  EXPECT_DOUBLE_EQ(m.state_bytes(), 29.25e9);
  MemoryOptions sharded;
  sharded.optimizer_shards = 4;
  EXPECT_DOUBLE_EQ(MemoryPerGpu(llama, Eff(), {2, 4}, Gpu("A100-80GB"), sharded).state_bytes(),
                   13e9 * 9 / 8);
}

TEST(MemoryModel, CheckpointTimeIsStateBytesOverStorageBandwidth) {
  // BERT-large: weights 2 + master and moments 12 = 14 B/param x 340e6 = 4.76e9 B; at 2 GB/s:
  // 2.38 s.
  const ModelSpec& bert = ModelCatalog::Default().Require("BERT-large");
  EXPECT_DOUBLE_EQ(CheckpointBytes(bert), 4.76e9);
  EXPECT_DOUBLE_EQ(CheckpointSeconds(bert, 2.0), 2.38);
}

TEST(MemoryModel, MemoryGrowsLinearlyWithBatch) {
  const ModelSpec& vit = ModelCatalog::Default().Require("ViT-L/16");
  const MemoryBreakdown m = MemoryPerGpu(vit, Eff(), {}, Gpu("V100-32GB"));
  // (1 + f) x (M_state + k B): the difference of two large sums, equal up to rounding.
  EXPECT_NEAR(m.BytesAtBatch(10) - m.BytesAtBatch(9), m.per_sample_bytes(),
              1e-12 * m.BytesAtBatch(10));
  EXPECT_DOUBLE_EQ(m.BytesAtBatch(0), m.static_bytes());
}

}  // namespace
}  // namespace clustersim
