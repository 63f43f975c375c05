// Validation of the memory and throughput models against published measurements. The data set
// (sim/data/validation/throughput.csv and memory.csv, compiled in; docs/model-validation.md
// describes every column and source) holds one row per published figure with its exact source:
// throughput rows (model, precision, sequence or image size, GPU type and system, GPU count,
// TP x PP, per-GPU micro-batch, accumulation, measured samples/s or TFLOP/s per GPU) and memory
// brackets (the largest per-GPU batch published to run and the smallest published to run out of
// memory). Each row is in the "calibration" split (the efficiency tables of the model catalog are
// fitted to those rows, FitEfficiency), "heldout" (never used for fitting, but the models were
// revised after its errors were seen) or "fresh" (gathered after the models were frozen and never
// used for fitting or revision; docs/model-validation.md, "A fresh held-out set").
//
// Every throughput row is also a memory fact: its micro-batch ran, so B_max must be at least that.
// A row's job runs on a cluster of the row's system (DGX-1, DGX-2, DGX A100, DGX H100 nodes) built
// in memory, placed on the lowest GPUs: replica r on GPUs [r TP PP, (r + 1) TP PP), stage j of a
// replica on the next TP GPUs; its TP, pipeline and data-parallel rings take their bandwidth and
// latency from the topology graph (sim/hardware/topology.h), a data-parallel ring that leaves its
// node sharing the node's NICs with the rings of the node's other GPUs.
#ifndef CLUSTERSIM_SIM_MODELS_VALIDATION_H_
#define CLUSTERSIM_SIM_MODELS_VALIDATION_H_

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/hardware/hardware.h"
#include "sim/models/goodput.h"
#include "sim/models/model_catalog.h"

namespace clustersim {

struct ThroughputRow {
  std::string id, split, group;
  // A catalog model, or "GPT" with the shape in layers / hidden / heads / vocab (a GPT decoder of
  // 12 L h^2 + V h parameters, Narayanan et al. 2021).
  std::string model;
  int layers = 0, hidden = 0, heads = 0, vocab = 0;
  int sequence = 0;  // tokens; 0 = the model's default
  int image = 0;     // pixels per side; 0 = the model's default
  std::string precision, framework, system, gpu;
  int gpus = 1, tp = 1, pp = 1, micro_batch = 1, accumulation = 1;
  std::string recompute;  // "", none, selective, full ("" = the model's recipe)
  bool distributed_optimizer = false, tp_comm_overlap = false;
  // "" / "overlap": gradients all-reduced in buckets during the last backward pass; "post": after
  // the backward pass; "post-fp16": after it, in FP16.
  std::string allreduce;
  std::string
      task;  // "pretrain" or "finetune" (the stacks' fine-tuning scripts, ThroughputOptions)
  // "": every sample padded to `sequence`; "lddl-bin64": NVIDIA's LDDL loader with sequence
  // binning at bin size 64 (validation.cc, kLoaders; docs/model-validation.md).
  std::string loader;
  double measured = 0;
  // "samples/s" (the whole job), "model-TFLOP/s/GPU" (72 B s l h^2 (1 + s/6h + V/12lh) FLOPs per
  // batch, Megatron-LM's count) or "hw-TFLOP/s/GPU" (96 B s l h^2 (1 + s/6h + V/16lh), the count
  // with the recomputed forward pass, Narayanan et al. 2021 eq. 3).
  std::string unit;
  std::string source;
  int64_t line = 0;
};

struct MemoryRow {
  std::string id, split, model;
  int sequence = 0, image = 0;
  std::string precision, framework, gpu;
  int fits = 0;  // largest per-GPU batch published to run
  int oom = 0;   // smallest per-GPU batch published to run out of memory; 0 = none
  int accumulation = 1;
  std::string source;
  int64_t line = 0;
};

struct ValidationData {
  std::vector<ThroughputRow> throughput;
  std::vector<MemoryRow> memory;
};

// The data set compiled into the binary.
const ValidationData& DefaultValidationData();
// Parses the two CSV texts; throws InputError naming the origin, line and column on a bad row.
ValidationData ParseValidationData(const std::string& throughput_csv,
                                   const std::string& throughput_origin,
                                   const std::string& memory_csv, const std::string& memory_origin);

struct ThroughputResult {
  const ThroughputRow* row = nullptr;
  double measured_samples = 0;   // samples/s of the whole job
  double predicted_samples = 0;  // samples/s of the whole job
  double error = 0;              // predicted / measured - 1
  double loader_speedup = 1;     // the row's loader over padding to `sequence` (1: none)
  double measured_mfu = 0;       // model FLOPs utilization of the measurement (16-bit peak)
  double predicted_mfu = 0;
  int64_t max_batch = 0;  // B_max of the row's configuration
  bool fits = true;       // max_batch >= the row's micro-batch
  StepEstimate estimate;
};

struct MemoryResult {
  const MemoryRow* row = nullptr;
  int64_t max_batch = 0;
  bool respected = false;  // fits <= max_batch < oom (oom 0: max_batch >= fits)
};

// Predicts every row. Throws InputError for a row naming an unknown model, GPU, system or stack.
std::vector<ThroughputResult> ValidateThroughput(const ValidationData& data,
                                                 const ModelCatalog& models,
                                                 const HardwareCatalog& hardware);
std::vector<MemoryResult> ValidateMemory(const ValidationData& data, const ModelCatalog& models,
                                         const HardwareCatalog& hardware);

// Aggregate of |error| over a set of rows.
struct ErrorSummary {
  std::string key;
  int rows = 0;
  double median_abs = 0;  // median of |predicted / measured - 1|
  double mean_signed = 0;
  double p90_abs = 0;
  double worst_abs = 0;
};
// Groups results by `key_of(result)` (sorted by key) and summarizes each group.
template <typename KeyOf>
std::vector<ErrorSummary> Summarize(const std::vector<ThroughputResult>& results, KeyOf key_of);
ErrorSummary SummarizeAll(const std::vector<ThroughputResult>& results, const std::string& key);
// "1", "2-8", "9-64", "65-512", ">512" GPUs.
std::string ScaleBucket(int gpus);

// Fits the catalog's efficiency tables to the calibration rows (docs/model-validation.md, "The
// fit"): the achieved fractions per (chip, class, precision) from the reference stacks' rows, the
// other stacks' factors per class, and the step-time variability per class from calibration rows
// on more than one GPU. Returns the catalog's tables with those entries replaced.
ModelEfficiency FitEfficiency(const ValidationData& data, const ModelCatalog& models,
                              const HardwareCatalog& hardware);
// The fitted entries as a JSON object: "chips" and "step_time_cv" in the catalog's form and
// "framework_throughput" (each stack's "throughput"), for sim/data/models.json.
std::string EfficiencyJson(const ModelEfficiency& efficiency);

// ---- implementation of the template ----
template <typename KeyOf>
std::vector<ErrorSummary> Summarize(const std::vector<ThroughputResult>& results, KeyOf key_of) {
  std::vector<std::string> keys;
  for (const auto& r : results) keys.push_back(key_of(r));
  std::vector<std::string> unique = keys;
  std::sort(unique.begin(), unique.end());
  unique.erase(std::unique(unique.begin(), unique.end()), unique.end());
  std::vector<ErrorSummary> out;
  for (const std::string& k : unique) {
    std::vector<ThroughputResult> part;
    for (size_t i = 0; i < results.size(); ++i) {
      if (keys[i] == k) part.push_back(results[i]);
    }
    out.push_back(SummarizeAll(part, k));
  }
  return out;
}

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_MODELS_VALIDATION_H_
