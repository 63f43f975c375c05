// The seeded rule that gives trace jobs without a model a model and a per-GPU batch.
#include "workloads/model_assignment.h"

#include <gtest/gtest.h>

#include <map>

#include "sim/models/model_catalog.h"

namespace clustersim {
namespace {

Job MakeJob(const std::string& id, int gpus, double seconds) {
  Job job;
  job.id = id;
  job.gpus = gpus;
  job.duration = seconds;
  return job;
}

TEST(ModelAssignment, EveryModelOfTheRuleIsInTheCatalogAndWeightsSumToOne) {
  for (const GpuTimeClass& c : ModelAssignmentClasses()) {
    double total = 0;
    for (const ModelChoice& choice : c.choices) {
      EXPECT_NE(ModelCatalog::Default().Find(choice.model), nullptr) << choice.model;
      EXPECT_GE(choice.max_batch, choice.min_batch);
      total += choice.weight;
    }
    EXPECT_NEAR(total, 1.0, 1e-12) << c.name;
  }
}

TEST(ModelAssignment, IsAPureFunctionOfJobAndSeed) {
  const Job job = MakeJob("job-17", 4, 7200);
  const ModelAssignment a = AssignModel(job, 42);
  const ModelAssignment b = AssignModel(job, 42);
  EXPECT_EQ(a.model, b.model);
  EXPECT_EQ(a.batch_size, b.batch_size);
  // Order independence: assigning a list and its reverse gives each job the same result.
  std::vector<Job> forward, backward;
  for (int i = 0; i < 200; ++i)
    forward.push_back(MakeJob("j" + std::to_string(i), 1 + i % 8, 600.0 * i));
  backward.assign(forward.rbegin(), forward.rend());
  EXPECT_EQ(AssignModels(forward, 7), 200);
  EXPECT_EQ(AssignModels(backward, 7), 200);
  for (size_t i = 0; i < forward.size(); ++i) {
    EXPECT_EQ(forward[i].model, backward[forward.size() - 1 - i].model);
    EXPECT_EQ(forward[i].batch_size, backward[forward.size() - 1 - i].batch_size);
  }
  // Another seed changes some assignments.
  int differ = 0;
  for (int i = 0; i < 200; ++i) {
    const Job j = MakeJob("j" + std::to_string(i), 1, 600);
    const ModelAssignment x = AssignModel(j, 1), y = AssignModel(j, 2);
    differ += x.model != y.model || x.batch_size != y.batch_size;
  }
  EXPECT_GT(differ, 50);
}

TEST(ModelAssignment, ClassesFollowGpuHours) {
  // 1 GPU x 3599 s < 1 GPU-hour: small. 16 GPUs x 1 h = 16 GPU-hours: large. 64 x 4 h = 256: huge.
  auto model_of = [](int gpus, double seconds, int i) {
    return AssignModel(MakeJob("c" + std::to_string(i), gpus, seconds), 3).model;
  };
  for (int i = 0; i < 50; ++i) {
    const std::string small = model_of(1, 3599, i);
    EXPECT_TRUE(small == "ResNet-50" || small == "BERT-base") << small;
    const std::string large = model_of(16, 3600, i);
    EXPECT_TRUE(large == "BERT-large" || large == "GPT-2-1.5B") << large;
    const std::string huge = model_of(64, 4 * 3600, i);
    EXPECT_TRUE(huge == "LLaMA-7B" || huge == "LLaMA-13B") << huge;
  }
}

TEST(ModelAssignment, DrawsFollowTheStatedDistribution) {
  // 40,000 small jobs: ResNet-50 and BERT-base each 50%. ResNet-50's recipe batch is 256: under
  // the default rule 256 with probability 1/2, 128 and 512 with 1/4 each; under `uniform` the 5
  // powers of two 32..512 at 20% each; under `reference` always 256. Binomial standard deviation
  // for p = 0.5, n = 40,000 is 0.25%; for p = 0.2-0.5 over ~20,000 draws at most 0.36%: 1.5%
  // tolerances are over 4 sigma.
  const int n = 40000;
  auto draw = [&](UserBatchRule rule, std::map<std::string, int>* models) {
    std::map<int, int> resnet_batches;
    for (int i = 0; i < n; ++i) {
      const ModelAssignment a = AssignModel(MakeJob("s" + std::to_string(i), 1, 600), 11, rule);
      ++(*models)[a.model];
      if (a.model == "ResNet-50") ++resnet_batches[a.batch_size];
    }
    return resnet_batches;
  };
  std::map<std::string, int> models;
  const auto recipe = draw(UserBatchRule::kRecipe, &models);
  EXPECT_EQ(models.size(), 2u);
  EXPECT_NEAR(models["ResNet-50"] / double(n), 0.5, 0.015);
  EXPECT_NEAR(models["BERT-base"] / double(n), 0.5, 0.015);
  const double resnet = models["ResNet-50"];
  ASSERT_EQ(recipe.size(), 3u);
  EXPECT_NEAR(recipe.at(128) / resnet, 0.25, 0.015);
  EXPECT_NEAR(recipe.at(256) / resnet, 0.50, 0.015);
  EXPECT_NEAR(recipe.at(512) / resnet, 0.25, 0.015);
  // The rules draw the same models (the model draw comes first).
  std::map<std::string, int> uniform_models, reference_models;
  const auto uniform = draw(UserBatchRule::kUniform, &uniform_models);
  const auto reference = draw(UserBatchRule::kReference, &reference_models);
  EXPECT_EQ(uniform_models, models);
  EXPECT_EQ(reference_models, models);
  ASSERT_EQ(uniform.size(), 5u);
  for (int b : {32, 64, 128, 256, 512}) {
    EXPECT_NEAR(uniform.at(b) / resnet, 0.2, 0.015) << b;
  }
  EXPECT_EQ(reference, (std::map<int, int>{{256, models["ResNet-50"]}}));
}

TEST(ModelAssignment, JobsThatNameAModelKeepIt) {
  std::vector<Job> jobs = {MakeJob("a", 1, 60), MakeJob("b", 1, 60), MakeJob("c", 1, 60)};
  jobs[0].model = "BERT-large";
  jobs[0].batch_size = 24;
  jobs[1].model = "GPT-2-1.5B";  // no batch: its recipe batch 8, or half or twice it
  jobs[2].model = "my-own-net";  // not in the table: left alone
  EXPECT_EQ(AssignModels(jobs, 5), 1);
  EXPECT_EQ(jobs[0].model, "BERT-large");
  EXPECT_EQ(jobs[0].batch_size, 24);
  EXPECT_TRUE(jobs[1].batch_size == 4 || jobs[1].batch_size == 8 || jobs[1].batch_size == 16)
      << jobs[1].batch_size;
  EXPECT_EQ(jobs[2].batch_size, 0);
}

// A job without GPUs trains no model: it is left as it is.
TEST(ModelAssignment, CpuOnlyJobsGetNoModel) {
  std::vector<Job> jobs = {MakeJob("cpu", 0, 3600), MakeJob("gpu", 1, 3600)};
  EXPECT_EQ(AssignModels(jobs, 5), 1);
  EXPECT_TRUE(jobs[0].model.empty());
  EXPECT_FALSE(jobs[1].model.empty());
}

// A model that cannot hold one sample on the job's GPUs is replaced by the same draw among its
// class's models that can (renormalized), else a smaller class's. A 1-GPU job of 300 GPU-hours is
// in the huge class (LLaMA-7B 70 %, LLaMA-13B 30 %):
// - with LLaMA-13B refused, every such job gets LLaMA-7B (the only one of the class left);
// - with both refused, the large class (BERT-large 40 %, GPT-2-1.5B 60 %) at the same draw u:
//   BERT-large for u < 0.4, else GPT-2-1.5B;
// - with nothing accepted, the drawn model stays.
// Without a refusal the result is the one without `holds`.
TEST(ModelAssignment, AModelTheJobCannotHoldIsRedrawnAmongThoseItCan) {
  const HoldsModel no_13b = [](const Job&, const std::string& m) { return m != "LLaMA-13B"; };
  const HoldsModel no_llama = [](const Job&, const std::string& m) {
    return m.rfind("LLaMA", 0) != 0;
  };
  const HoldsModel nothing = [](const Job&, const std::string&) { return false; };
  const HoldsModel all = [](const Job&, const std::string&) { return true; };
  std::map<std::string, int> seen;
  for (int i = 0; i < 400; ++i) {
    const Job job = MakeJob("h" + std::to_string(i), 1, 300 * 3600.0);
    const std::string drawn = AssignModel(job, 9).model;
    ASSERT_TRUE(drawn == "LLaMA-7B" || drawn == "LLaMA-13B") << drawn;
    EXPECT_EQ(AssignModel(job, 9, UserBatchRule::kRecipe, all).model, drawn);
    EXPECT_EQ(AssignModel(job, 9, UserBatchRule::kRecipe, no_13b).model, "LLaMA-7B");
    EXPECT_EQ(AssignModel(job, 9, UserBatchRule::kRecipe, nothing).model, drawn);
    const std::string large = AssignModel(job, 9, UserBatchRule::kRecipe, no_llama).model;
    ASSERT_TRUE(large == "BERT-large" || large == "GPT-2-1.5B") << large;
    // The same u: LLaMA-7B (u < 0.7) and BERT-large (u < 0.4) are the low end of both classes.
    if (large == "BERT-large") {
      EXPECT_EQ(drawn, "LLaMA-7B");
    }
    if (drawn == "LLaMA-13B") {
      EXPECT_EQ(large, "GPT-2-1.5B");
    }
    ++seen[large];
  }
  // About 40 % BERT-large over 400 draws (binomial sd 2.4 %).
  EXPECT_NEAR(seen["BERT-large"] / 400.0, 0.4, 0.08);
}

}  // namespace
}  // namespace clustersim
