// GPU memory of a training job (docs/models.md#memory-per-gpu). Pure functions of a model and its
// per-job settings (sim/models/model_catalog.h), a GPU (sim/hardware/hardware.h) and a parallel
// layout; no state. This is the API the engine's OOM check, GPU sharing and the cosched policy
// build on; docs/model-validation.md holds it against published out-of-memory brackets.
//
// The model, per GPU:
//   M(B) = (1 + f) x (M_state + k B)                           (f: allocator fragmentation)
//   M_state = (weights + gradients + optimizer state / optimizer shards) / (TP x PP)
//             [+ an FP32 accumulation buffer, 4 B/parameter, for stacks that keep one]
//   k        = activation bytes per sample of the micro-batch / TP (ActivationBytesPerSample)
//   reserved = what the job can never use: the driver's share of the card (memory - usable
//              memory, GpuSpec::UsableMemoryGib) + the runtime overhead outside the allocator
//              (CUDA context, cuBLAS/cuDNN handles and workspaces, NCCL buffers;
//              ModelEfficiency::runtime_overhead_bytes)
//   B_max    = floor((M_gpu - reserved - (1 + f) M_state) / ((1 + f) k))
// Model state per parameter (Rajbhandari et al. 2020, ZeRO §3.1, with FP32 gradients as both
// reference stacks keep them: PyTorch automatic mixed precision holds FP32 parameters and
// gradients plus a 16-bit copy of the weights for the forward pass; Megatron-LM keeps an FP32
// main-gradient buffer, NVIDIA/Megatron-LM docs/source/api-guide/dist_optimizer.md, 18 B/param):
//   mixed precision + Adam: 16-bit weights 2 + FP32 gradients 4 + FP32 master weights 4 + Adam
//   m 4 + v 4 = 18 bytes; mixed + SGD with momentum: 2 + 4 + 4 + 4 = 14; mixed + SGD: 10;
//   FP32/TF32 + Adam: 4 + 4 + 8 = 16; FP32 + SGD momentum: 12; FP32 + SGD: 8.
// The runtime overhead (1.27 GiB) and fragmentation (1%) are measured: PyTorch's out-of-memory
// reports give the memory in use outside its allocator as total - reserved - free (79.35 - 77.96 -
// 0.11 = 1.28 GiB on an A100-80GB, NVIDIA/DeepLearningExamples issue #1165; 15.78 - 14.34 - 0.18 =
// 1.26 GiB on a V100-16GB, kchengiva/Shift-GCN issue #34) and reserved-but-unallocated memory of
// 1.0% and 0.6% of the reserved memory.
// Tensor parallelism (Megatron, with sequence parallelism; Korthikanti et al. 2022 §4.2.2) splits
// the model state and the activations by TP. Pipeline parallelism splits the model state by PP;
// with the 1F1B schedule the first stage keeps the activations of PP in-flight micro-batches of
// its L/PP layers, i.e. one micro-batch's activations of the whole depth (Korthikanti §4.2.3); the
// last stage keeps one micro-batch of its layers plus the output logits: k is the larger of the
// two. Data parallelism replicates everything, except the optimizer state when a distributed
// optimizer (ZeRO stage 1) shards it over the data-parallel ranks.
// Gradient accumulation: N_accum = ceil(B_target / B_max).
// Memory units: bytes. GPU memory comes from the catalog in GiB (x 2^30).
#ifndef CLUSTERSIM_SIM_MODELS_MEMORY_MODEL_H_
#define CLUSTERSIM_SIM_MODELS_MEMORY_MODEL_H_

#include <cstdint>
#include <optional>

#include "sim/hardware/hardware.h"
#include "sim/models/model_catalog.h"

namespace clustersim {

// Bytes per parameter of each part of the model state.
struct StateBytesPerParameter {
  double weights = 2;
  double gradients = 4;
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
  double accumulation = 0;           // FP32 gradient accumulation buffer, if any
  double activation_per_sample = 0;  // k, before fragmentation
  double fragmentation = 0;          // f, share of the allocator's tensors
  double runtime_overhead = 0;       // outside the allocator; part of `reserved`
  double reserved = 0;               // never usable by the job: driver share + runtime overhead

  double state_bytes() const { return weights + gradients + optimizer + accumulation; }
  // (1 + f) x M_state: the batch-independent part of M(B).
  double static_bytes() const { return (1 + fragmentation) * state_bytes(); }
  // (1 + f) x k: bytes per sample of the micro-batch.
  double per_sample_bytes() const { return (1 + fragmentation) * activation_per_sample; }
  // Returns M(B) for a per-GPU micro-batch B (not counting `reserved`).
  double BytesAtBatch(int64_t batch) const {
    return static_bytes() + per_sample_bytes() * static_cast<double>(batch);
  }
};

// Settings of the memory model beyond the model and layout.
struct MemoryOptions {
  std::optional<StateBytesPerParameter> state;  // default: StateBytesFor(precision, optimizer)
  JobSettings settings;                         // per-job precision and sequence length
  const Framework* framework = nullptr;         // default: the reference stack ("pytorch")
  int optimizer_shards = 1;                     // distributed optimizer over this many DP ranks
  // Gradients sharded over this many DP ranks (fully sharded data parallelism, ZeRO stage 2 and
  // up; Llama 3's FSDP shards optimizer states and gradients, Dubey et al. 2024 section 3.3.2).
  int gradient_shards = 1;
  bool accumulating = false;                    // gradient accumulation over micro-batches
};

// Returns the per-GPU breakdown of `model` on `gpu` under `parallelism`; `efficiency` gives the
// runtime overhead, fragmentation and the stacks. REQUIRES: tensor, pipeline, shards >= 1.
MemoryBreakdown MemoryPerGpu(const ModelSpec& model, const ModelEfficiency& efficiency,
                             const ModelParallelism& parallelism, const GpuSpec& gpu,
                             const MemoryOptions& options = {});

// Returns the GPU's memory in bytes (catalog GiB x 2^30).
double GpuMemoryBytes(const GpuSpec& gpu);
// Returns the bytes of `gpu` a job's tensors may fill: the usable memory (GpuSpec::
// UsableMemoryGib, the driver's share taken) less the runtime overhead outside the allocator
// (ModelEfficiency::runtime_overhead_bytes); GpuMemoryBytes - MemoryBreakdown::reserved.
double AllocatableBytes(const GpuSpec& gpu, const ModelEfficiency& efficiency);

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
std::optional<ModelParallelism> MinimalModelParallelism(const ModelSpec& model,
                                                        const ModelEfficiency& efficiency,
                                                        const GpuSpec& gpu,
                                                        const MemoryOptions& options = {},
                                                        int max_tensor = 8, int max_pipeline = 128);

// Bytes written by a checkpoint save and read by a restore: everything but the gradients
// (weights + FP32 master copy + optimizer moments), whole model (all TP x PP shards).
double CheckpointBytes(const ModelSpec& model);

// docs/engine.md#checkpoints: save (or restore) time = model state bytes / storage bandwidth,
// seconds. REQUIRES: storage_gbps > 0 (GB/s, 1e9 bytes per second).
double CheckpointSeconds(const ModelSpec& model, double storage_gbps);

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_MODELS_MEMORY_MODEL_H_
