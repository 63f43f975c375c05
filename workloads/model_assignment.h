// Assigning a model and a user batch size to trace jobs that carry none (traces/README.md): most
// public traces (Philly, Helios, Acme, PAI) name no model, but the memory model, OOM and the
// cosched policy need one. The rule is documented, seeded and a pure function of (job, seed):
//
// 1. GPU-time class from the trace: g = gpus x duration / 3600 GPU-hours.
//      small  g <  1       ResNet-50 50%, BERT-base 50%
//      medium 1 <= g < 16  ResNet-50 30%, BERT-large 40%, ViT-L/16 30%
//      large  16 <= g < 256 BERT-large 40%, GPT-2-1.5B 60%
//      huge   g >= 256     LLaMA-7B 70%, LLaMA-13B 30%
//    (bigger jobs train bigger models; the thresholds split the Philly trace's GPU-time into
//    classes that each hold a sizeable share of the work; the mix is an assumption — no public
//    trace records per-job models with durations.)
// 2. Per-GPU batch: a power of two drawn uniformly from the model's range (users pick powers of
//    two; the ranges straddle each model's B_max on 16-80 GB GPUs so that some requests do not
//    fit, as in practice: docs/models.md#oom cites 5-10% OOM failures):
//      ResNet-50 32..512, BERT-base 16..256, BERT-large 8..128, ViT-L/16 8..128,
//      GPT-2-1.5B 1..32, LLaMA-7B 1..16, LLaMA-13B 1..16.
// Draws come from SplitMix64 of (seed, FNV-1a hash of the job's trace id), so a job's assignment
// depends on nothing else: not on the order of the trace or on other jobs.
#ifndef CLUSTERSIM_WORKLOADS_MODEL_ASSIGNMENT_H_
#define CLUSTERSIM_WORKLOADS_MODEL_ASSIGNMENT_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "sim/engine/job.h"

namespace clustersim {

struct ModelChoice {
  const char* model;  // a name in the default model catalog
  double weight;      // probability within its class
  int min_batch;      // per-GPU batch range, powers of two
  int max_batch;
};

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

// Returns the model and per-GPU batch of `job` under the rule above. Pure: the same (job.id,
// gpus, duration, seed) always give the same result.
ModelAssignment AssignModel(const Job& job, uint64_t seed);

// Sets `model` and `batch_size` of every job whose model is empty (a job with a model keeps it,
// and its batch if it has one; a missing batch is drawn from its model's range if the model is in
// the table, else left 0). Returns the number of jobs changed.
int64_t AssignModels(std::span<Job> jobs, uint64_t seed);

}  // namespace clustersim

#endif  // CLUSTERSIM_WORKLOADS_MODEL_ASSIGNMENT_H_
