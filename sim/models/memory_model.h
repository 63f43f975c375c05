// GPU memory of a training job (docs/models.md#memory-per-gpu). Pure functions of a
// model (sim/models/model_catalog.h), a GPU (sim/hardware/hardware.h) and a parallel layout; no
// state. This is the API the engine's OOM check, GPU sharing and the cosched policy build on.
//
// The model, per GPU:
//   M(B) = M_static + k B                                         (docs/models.md#memory-per-gpu)
//   M_static = (weights + gradients + optimizer state) / (TP x PP) + workspace
//   k        = activation bytes per sample / TP                   (per micro-batch sample)
//   B_max    = floor((M_gpu - M_static - M_reserved) / k)          (docs/models.md#maximum-batch)
// Model state per parameter (Rajbhandari et al. 2020, ZeRO §3.1):
//   mixed precision + Adam: FP16/BF16 weights 2 + gradients 2 + FP32 master weights 4 + Adam
//   first moment m 4 + second moment v 4 = 16 bytes (the optimizer state is 12 of them);
//   mixed + SGD with momentum: 2 + 2 + master 4 + momentum 4 = 12; mixed + SGD: 2 + 2 + 4 = 8;
//   FP32 + Adam: 4 + 4 + 8 = 16; FP32 + SGD momentum: 4 + 4 + 4 = 12; FP32 + SGD: 4 + 4 = 8.
// Workspace (cuDNN/cuBLAS buffers, communication buffers): docs/models.md takes 10-20% of the
// model size; we take kWorkspaceFractionOfWeights of the weight bytes. Reserved (CUDA context,
// allocator fragmentation): docs/models.md says 10-15% of the GPU; its worked example reserves
// 1.6 GB of 16 GB; we take kReservedFraction of the GPU's memory.
// Tensor parallelism (Megatron, with sequence parallelism; Korthikanti et al. 2022 §4.2.2) splits
// the model state and the activations by TP. Pipeline parallelism splits the model state by PP;
// with the 1F1B schedule the first stage keeps the activations of PP in-flight micro-batches of
// its L/PP layers, i.e. one micro-batch's activations of the whole depth (Korthikanti §4.2.3), so
// the activation term is not divided by PP. Data parallelism replicates everything (no ZeRO).
// Gradient accumulation (docs/models.md#gradient-accumulation): N_accum = ceil(B_target / B_max).
// Memory units: bytes. GPU memory comes from the catalog in GiB (x 2^30).
#ifndef CLUSTERSIM_SIM_MODELS_MEMORY_MODEL_H_
#define CLUSTERSIM_SIM_MODELS_MEMORY_MODEL_H_

#include <cstdint>
#include <optional>

#include "sim/hardware/hardware.h"
#include "sim/models/model_catalog.h"

namespace clustersim {

// Tunables, each with its default and trade-off.
// Workspace as a fraction of the weight bytes: docs/models.md gives 10-20%; the low end, since
// the reserve below also absorbs library buffers.
inline constexpr double kWorkspaceFractionOfWeights = 0.10;
// Reserved share of a GPU's memory: docs/models.md gives 10-15% (1.6 GB of 16 GB in its
// example). Larger is safer against OOM and wastes memory.
inline constexpr double kReservedFraction = 0.10;

// Bytes per parameter of each part of the model state.
struct StateBytesPerParameter {
  double weights = 2;
  double gradients = 2;
  double optimizer = 12;  // FP32 master copy and optimizer moments
  double total() const { return weights + gradients + optimizer; }
};

// Returns the breakdown for a precision and optimizer (table in the header comment).
StateBytesPerParameter StateBytesFor(Precision precision, Optimizer optimizer);

struct ModelParallelism {
  int tensor = 1;    // TP degree
  int pipeline = 1;  // PP degree
  int model_parallel_gpus() const { return tensor * pipeline; }
};

// Memory of one GPU of a job, bytes.
struct MemoryBreakdown {
  double weights = 0;
  double gradients = 0;
  double optimizer = 0;
  double workspace = 0;
  double activation_per_sample = 0;  // k
  double reserved = 0;               // kept free on the GPU; not part of M(B)

  double static_bytes() const { return weights + gradients + optimizer + workspace; }
  // Returns M(B) = M_static + k B for a per-GPU micro-batch B (not counting `reserved`).
  double BytesAtBatch(int64_t batch) const {
    return static_bytes() + activation_per_sample * static_cast<double>(batch);
  }
};

// Overrides of the defaults above (for what-if studies and the GPT-3 example's accounting).
struct MemoryOptions {
  std::optional<StateBytesPerParameter> state;  // default: StateBytesFor(precision, optimizer)
  double workspace_fraction = kWorkspaceFractionOfWeights;
  double reserved_fraction = kReservedFraction;
};

// Returns the per-GPU breakdown of `model` on a GPU of `gpu_memory_bytes` under `parallelism`.
// REQUIRES: tensor, pipeline >= 1.
MemoryBreakdown MemoryPerGpu(const ModelSpec& model, const ModelParallelism& parallelism,
                             double gpu_memory_bytes, const MemoryOptions& options = {});

// Returns the GPU's memory in bytes (catalog GiB x 2^30).
double GpuMemoryBytes(const GpuSpec& gpu);

// docs/models.md#maximum-batch: floor((gpu - static - reserved) / per_sample), or 0 when not even
// one sample fits (also when gpu - static - reserved < 0). REQUIRES: per_sample_bytes > 0.
int64_t MaxBatch(double gpu_bytes, double static_bytes, double reserved_bytes,
                 double per_sample_bytes);
// The same for a breakdown on a GPU of `gpu_bytes`.
int64_t MaxBatch(const MemoryBreakdown& memory, double gpu_bytes);

// Returns whether a per-GPU micro-batch `batch` fits: M(batch) + reserved <= gpu_bytes.
bool Fits(const MemoryBreakdown& memory, int64_t batch, double gpu_bytes);

// docs/models.md#gradient-accumulation: ceil(target_batch / max_batch). REQUIRES: both >= 1.
int64_t AccumulationSteps(int64_t target_batch, int64_t max_batch);

// Returns the smallest model-parallel layout (fewest GPUs; among equals the larger TP, TP at most
// `max_tensor`, a power of two, and PP a power of two up to `max_pipeline`) with which one sample
// per GPU fits on `gpu`, or nullopt when none does.
std::optional<ModelParallelism> MinimalModelParallelism(const ModelSpec& model, const GpuSpec& gpu,
                                                        int max_tensor = 8, int max_pipeline = 128);

// Bytes written by a checkpoint save and read by a restore: everything but the gradients
// (weights + FP32 master copy + optimizer moments), whole model (all TP x PP shards).
double CheckpointBytes(const ModelSpec& model);

// docs/engine.md#checkpoints: save (or restore) time = model state bytes / storage bandwidth,
// seconds. REQUIRES: storage_gbps > 0 (GB/s, 1e9 bytes per second).
double CheckpointSeconds(const ModelSpec& model, double storage_gbps);

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_MODELS_MEMORY_MODEL_H_
