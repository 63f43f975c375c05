// `clustersim advise` and `clustersim list models` end to end: output and errors.
#include <gtest/gtest.h>

#include <sstream>

#include "tests/cli/cli_test_util.h"

namespace clustersim::testing {
namespace {

constexpr int kExitBadInput = 2;

TEST(Advise, PrintsMemoryBmaxTableAndRecommendation) {
  const CliResult r = RunCli({"advise", "--model", "BERT-large", "--gpu", "V100-16GB"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* part : {"weights", "gradients", "optimizer state", "activations/sample",
                           "reserved", "B_max", "60", "goodput", "recommended", "checkpoint"}) {
    EXPECT_NE(r.out.find(part), std::string::npos) << part << "\n" << r.out;
  }
}

TEST(Advise, GlobalBatchGivesAccumulation) {
  // B_max 60 on a V100-16GB: a global batch of 512 takes N = ceil(512/60) = 9 micro-batches of
  // ceil(512/9) = 57 (global 513, the smallest N x b >= 512 with b <= B_max).
  const CliResult r =
      RunCli({"advise", "--model", "BERT-large", "--gpu", "V100-16GB", "--global-batch", "512"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("per-GPU batch 57, accumulation 9, global batch 513"), std::string::npos)
      << r.out;
}

TEST(Advise, TensorParallelLlamaShowsItsCommunicationAndStatisticalEfficiencyAtMostOne) {
  const CliResult r = RunCli({"advise", "--model", "LLaMA-13B", "--gpu", "A100-80GB", "--tp", "4",
                              "--pp", "1", "--gpus", "4"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Per-GPU batch 1: four all-reduces per layer (Megatron-LM) over 40 layers of 1 x 2048 x 5120
  // BF16 elements on a 4-GPU ring of 300 GB/s with 2 us per step:
  // 160 x (2 x 3/4 x 20,971,520 B / 300e9 B/s + 6 x 2e-6 s) = 0.0187 s.
  const auto row = r.out.find("\n         1        1 ");
  ASSERT_NE(row, std::string::npos) << r.out;
  const std::string line = r.out.substr(row + 1, r.out.find('\n', row + 1) - row - 1);
  EXPECT_NE(line.find(" 0.0187 "), std::string::npos) << line;
  // Statistical efficiency phi / (phi + M) is at most 1 on every row of the table.
  std::istringstream table(r.out.substr(r.out.find("stat_eff")));
  std::string header_line, text;
  std::getline(table, header_line);
  int rows = 0;
  while (std::getline(table, text) && !text.empty()) {
    std::istringstream fields(text);
    double batch, global, step, tp, sps, stat;
    std::string mfu;
    fields >> batch >> global >> step >> tp >> sps >> mfu >> stat;
    ASSERT_FALSE(fields.fail()) << text;
    EXPECT_GT(tp, 0) << text;
    EXPECT_LE(stat, 1.0) << text;
    EXPECT_GT(stat, 0.9) << text;  // phi 406 against global batches <= 6
    ++rows;
  }
  EXPECT_GE(rows, 2);
  // The recommendation (batch 6): 160 x (6 x 2 x 3/4 x 10,485,760 values x 2 B / 300e9 + 1.2e-5)
  // = 0.1026 s.
  EXPECT_NE(r.out.find("tensor-parallel 0.1026"), std::string::npos) << r.out;
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
