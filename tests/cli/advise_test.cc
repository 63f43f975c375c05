// `clustersim advise` and `clustersim list models` end to end: output and errors.
#include <gtest/gtest.h>

#include "tests/cli/cli_test_util.h"

namespace clustersim::testing {
namespace {

constexpr int kExitBadInput = 2;

TEST(Advise, PrintsMemoryBmaxTableAndRecommendation) {
  const CliResult r = RunCli({"advise", "--model", "BERT-large", "--gpu", "V100-16GB"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* part : {"weights", "gradients", "optimizer state", "activations/sample",
                           "reserved", "B_max", "71", "goodput", "recommended", "checkpoint"}) {
    EXPECT_NE(r.out.find(part), std::string::npos) << part << "\n" << r.out;
  }
}

TEST(Advise, GlobalBatchGivesAccumulation) {
  // B_max 71 on a V100-16GB: a global batch of 512 takes ceil(512/71) = 8 steps of 64.
  const CliResult r =
      RunCli({"advise", "--model", "BERT-large", "--gpu", "V100-16GB", "--global-batch", "512"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("per-GPU batch 64, accumulation 8, global batch 512"), std::string::npos)
      << r.out;
}

TEST(Advise, UnknownModelAndGpuListTheValidNames) {
  CliResult r = RunCli({"advise", "--model", "GPT-5", "--gpu", "A100-80GB"});
  EXPECT_EQ(r.exit_code, kExitBadInput);
  EXPECT_NE(r.err.find("GPT-5"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("LLaMA-7B"), std::string::npos) << r.err;
  r = RunCli({"advise", "--model", "LLaMA-7B", "--gpu", "B200"});
  EXPECT_EQ(r.exit_code, kExitBadInput);
  EXPECT_NE(r.err.find("B200"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("H100-80GB"), std::string::npos) << r.err;
}

TEST(Advise, ModelThatDoesNotFitSaysWhichParallelismWould) {
  const CliResult r = RunCli({"advise", "--model", "LLaMA-7B", "--gpu", "A100-80GB"});
  EXPECT_EQ(r.exit_code, kExitBadInput);
  EXPECT_NE(r.err.find("does not fit"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("TP 2 x PP 1"), std::string::npos) << r.err;
  const CliResult split =
      RunCli({"advise", "--model", "LLaMA-7B", "--gpu", "A100-80GB", "--tp", "2", "--gpus", "2"});
  EXPECT_EQ(split.exit_code, 0) << split.err;
}

TEST(ListModels, PrintsTheCatalogAndAcceptsAReplacement) {
  CliResult r = RunCli({"list", "models"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("ViT-L/16"), std::string::npos);
  TempDir dir;
  WriteFile(dir.File("models.json"),
            R"({"models":[{"name":"tiny","family":"other","parameters":1e6,"layers":2,
    "hidden_size":64,"attention_heads":0,"sequence_length":0,"image_size":32,
    "precision":"fp32","optimizer":"sgd","activation_bytes_per_sample":1000,
    "flops_per_sample":1e8,"gradient_noise_scale":[10,100],"reference_batch":32,"batch_half":1,
    "calibration":{"gpu":"V100-16GB","mfu":0.3}}]})");
  r = RunCli({"list", "models", "--models", dir.File("models.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("tiny"), std::string::npos);
  EXPECT_EQ(r.out.find("ResNet-50"), std::string::npos);
  r = RunCli(
      {"advise", "--model", "tiny", "--gpu", "T4-16GB", "--models", dir.File("models.json")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

}  // namespace
}  // namespace clustersim::testing
