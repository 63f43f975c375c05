// Assigning a model and a user batch size to trace jobs that carry none (traces/README.md): most
// public traces (Philly, Helios, Acme, PAI) name no model, but the memory model, OOM and the
// cosched policy need one. The rule is documented, seeded and a pure function of (job, seed, rule):
//
// 1. GPU-time class from the trace: g = gpus x duration / 3600 GPU-hours.
//      small  g <  1       ResNet-50 50%, BERT-base 50%
//      medium 1 <= g < 16  ResNet-50 30%, BERT-large 40%, ViT-L/16 30%
//      large  16 <= g < 256 BERT-large 40%, GPT-2-1.5B 60%
//      huge   g >= 256     LLaMA-7B 70%, LLaMA-13B 30%
//    (bigger jobs train bigger models; the thresholds split the Philly trace's GPU-time into
//    classes that each hold a sizeable share of the work; the mix is an assumption — no public
//    trace records per-job models with durations.)
// 2. Per-GPU batch (UserBatchRule), from the model's published training recipe (the per-GPU
//    batch of its reference implementation; the table below cites each):
//      kRecipe (default): the recipe batch with probability 1/2, half of it or twice it with
//        probability 1/4 each (users port a recipe to GPUs of another memory size or count by a
//        power of two; the recipes themselves do so: NVIDIA's BERT-large recipe runs 16 per
//        16 GB V100, 64 per 32 GB V100 and 256 per 80 GB A100);
//      kReference: exactly the recipe batch;
//      kUniform: a power of two drawn uniformly from the model's range (the rule before the
//        recipes; kept for sensitivity studies):
//          ResNet-50 32..512, BERT-base 16..256, BERT-large 8..128, ViT-L/16 8..128,
//          GPT-2-1.5B 1..32, LLaMA-7B 1..16, LLaMA-13B 1..16.
//    Recipes (per-GPU batch, mixed precision): ResNet-50 256 (NVIDIA DeepLearningExamples,
//    PyTorch/Classification/ConvNets/configs.yml, AMP on DGX-1 V100); BERT-base 32 (Devlin et al.
//    2019, appendix A.3: fine-tuning batch 16 or 32); BERT-large 64 (DeepLearningExamples PyTorch
//    BERT pre-training phase 1 on DGX-1 32 GB); ViT-L/16 32 (Dosovitskiy et al. 2021, Table 3:
//    fine-tuning batch 512, over 16 GPUs); GPT-2-1.5B 8 (Shoeybi et al. 2019, Megatron-LM: batch 8
//    per model replica in the scaling runs); LLaMA-7B and -13B 1 (NVIDIA NeMo performance summary,
//    docs/source/performance/performance_summary.md: LLAMA2-7B and -13B pre-training at
//    micro-batch 1).
// 3. A job without GPUs (a CPU-only job) gets none. With `holds` (what `run --assign-models`
//    gives: the memory model on the cluster's GPU types the job may use), a model that cannot
//    hold one sample on the job's GPUs is replaced by one of the class that can, else of a
//    smaller class (AssignModel below), so assignment never turns a runnable job into one the
//    engine rejects.
// Draws come from SplitMix64 of (seed, FNV-1a hash of the job's trace id), so a job's assignment
// depends on nothing else: not on the order of the trace or on other jobs. The model draw comes
// first and the batch draw second under every rule, so the rules give every job the same model.
#ifndef CLUSTERSIM_WORKLOADS_MODEL_ASSIGNMENT_H_
#define CLUSTERSIM_WORKLOADS_MODEL_ASSIGNMENT_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "sim/engine/job.h"

namespace clustersim {

struct ModelChoice {
  const char* model;  // a name in the default model catalog
  double weight;      // probability within its class
  int min_batch;      // per-GPU batch range of kUniform, powers of two
  int max_batch;
  int recipe_batch;  // the published recipe's per-GPU batch, a power of two
};

enum class UserBatchRule { kRecipe, kReference, kUniform };
// "recipe", "reference" or "uniform"; nullopt otherwise.
std::optional<UserBatchRule> ParseUserBatchRule(const std::string& text);
const char* UserBatchRuleName(UserBatchRule rule);

struct GpuTimeClass {
  const char* name;
  double max_gpu_hours;  // upper bound (exclusive); the last class is unbounded
  std::vector<ModelChoice> choices;
};

// The rule's table, in increasing GPU-time order.
const std::vector<GpuTimeClass>& ModelAssignmentClasses();

struct ModelAssignment {
  std::string model;
  int batch_size = 0;  // per GPU
};

// Whether `model` (a catalog name) can hold one sample on the job's GPUs (of a type it may use),
// as the run's memory model says; the assignment then never gives a job a model it cannot run.
using HoldsModel = std::function<bool(const Job& job, const std::string& model)>;

// Returns the model and per-GPU batch of `job` under the rule above. Pure: the same (job.id,
// gpus, duration, seed, rule, holds) always give the same result. With `holds`, a drawn model
// that cannot hold one sample on the job's GPUs is replaced by the same draw among the class's
// models that can (weights renormalized), else among the next smaller class's, and so on; if
// none can, the drawn model stays (the engine then rejects the job, naming why).
ModelAssignment AssignModel(const Job& job, uint64_t seed,
                            UserBatchRule rule = UserBatchRule::kRecipe,
                            const HoldsModel& holds = nullptr);

// Sets `model` and `batch_size` of every job whose model is empty (a job with a model keeps it,
// and its batch if it has one; a missing batch is drawn from its model's range if the model is in
// the table, else left 0). A job without GPUs (a CPU-only job) is left as it is: it trains no
// model. Returns the number of jobs changed.
int64_t AssignModels(std::span<Job> jobs, uint64_t seed,
                     UserBatchRule rule = UserBatchRule::kRecipe, const HoldsModel& holds = nullptr);

}  // namespace clustersim

#endif  // CLUSTERSIM_WORKLOADS_MODEL_ASSIGNMENT_H_
