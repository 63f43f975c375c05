#include "sim/models/memory_model.h"

#include <algorithm>
#include <cmath>

#include "sim/util/error.h"

namespace clustersim {

StateBytesPerParameter StateBytesFor(Precision precision, Optimizer optimizer) {
  const bool mixed = IsMixed(precision);
  StateBytesPerParameter s;
  s.weights = mixed ? 2 : 4;  // the 16-bit copy the forward pass reads, or the FP32 weights
  s.gradients = 4;            // FP32 in both reference stacks (header comment)
  // Mixed precision keeps an FP32 master copy in the optimizer (ZeRO §3.1).
  const double master = mixed ? 4 : 0;
  switch (optimizer) {
    case Optimizer::kAdam:
      s.optimizer = master + 4 + 4;  // m and v in FP32
      break;
    case Optimizer::kSgdMomentum:
      s.optimizer = master + 4;
      break;
    case Optimizer::kSgd:
      s.optimizer = master;
      break;
  }
  return s;
}

double GpuMemoryBytes(const GpuSpec& gpu) { return gpu.memory_gib * 1073741824.0; }

double AllocatableBytes(const GpuSpec& gpu, const ModelEfficiency& efficiency) {
  return gpu.UsableMemoryGib() * 1073741824.0 - efficiency.runtime_overhead_bytes;
}

MemoryBreakdown MemoryPerGpu(const ModelSpec& model, const ModelEfficiency& efficiency,
                             const ModelParallelism& parallelism, const GpuSpec& gpu,
                             const MemoryOptions& options) {
  CHECK(parallelism.tensor >= 1 && parallelism.pipeline >= 1 && options.optimizer_shards >= 1 &&
            options.gradient_shards >= 1,
        "model parallel degrees and optimizer and gradient shards must be >= 1");
  const Framework& framework =
      options.framework ? *options.framework : efficiency.FrameworkNamed("pytorch");
  const Precision precision = EffectivePrecision(model, options.settings);
  StateBytesPerParameter per_param =
      options.state ? *options.state : StateBytesFor(precision, model.optimizer);
  if (!options.state && IsMixed(precision)) per_param.gradients = framework.gradient_bytes_mixed;
  const double params = model.parameters / parallelism.model_parallel_gpus();
  MemoryBreakdown m;
  m.weights = params * per_param.weights;
  m.gradients = params * per_param.gradients / options.gradient_shards;
  m.optimizer = params * per_param.optimizer / options.optimizer_shards;
  if (options.accumulating && framework.accumulation_buffer) m.accumulation = params * 4.0;
  // The first pipeline stage keeps PP micro-batches of L/PP layers (= one micro-batch of all
  // layers); the last keeps one micro-batch of its layers and the logits.
  ModelSpec layers_only = model;
  layers_only.vocab_size = 0;
  const double layers = ActivationBytesPerSample(layers_only, options.settings, framework);
  const double logits = ActivationBytesPerSample(model, options.settings, framework) - layers;
  const double pp = parallelism.pipeline;
  const double per_sample = pp > 1 ? std::max(layers, layers / pp + logits) : layers + logits;
  m.activation_per_sample = per_sample / parallelism.tensor;
  m.fragmentation = efficiency.allocator_fragmentation;
  m.runtime_overhead = efficiency.runtime_overhead_bytes;
  m.reserved = GpuMemoryBytes(gpu) - AllocatableBytes(gpu, efficiency);
  return m;
}

int64_t MaxBatch(double gpu_bytes, double static_bytes, double reserved_bytes,
                 double per_sample_bytes) {
  CHECK(per_sample_bytes > 0, "activation bytes per sample must be > 0");
  const double free_bytes = gpu_bytes - static_bytes - reserved_bytes;
  if (free_bytes < per_sample_bytes) return 0;
  // The relative nudge keeps exact quotients (2400e6 / 50e6 = 48) from flooring to one less when
  // the operands carry rounding error.
  return static_cast<int64_t>(std::floor(free_bytes / per_sample_bytes * (1 + 1e-12)));
}

int64_t MaxBatch(const MemoryBreakdown& memory, double gpu_bytes) {
  return MaxBatch(gpu_bytes, memory.static_bytes(), memory.reserved, memory.per_sample_bytes());
}

bool Fits(const MemoryBreakdown& memory, int64_t batch, double gpu_bytes) {
  return batch <= MaxBatch(memory, gpu_bytes);
}

int64_t AccumulationSteps(int64_t target_batch, int64_t max_batch) {
  CHECK(target_batch >= 1 && max_batch >= 1, "batches must be >= 1");
  return (target_batch + max_batch - 1) / max_batch;
}

std::optional<ModelParallelism> MinimalModelParallelism(const ModelSpec& model,
                                                        const ModelEfficiency& efficiency,
                                                        const GpuSpec& gpu,
                                                        const MemoryOptions& options,
                                                        int max_tensor, int max_pipeline) {
  const double gpu_bytes = GpuMemoryBytes(gpu);
  std::optional<ModelParallelism> best;
  for (int tp = 1; tp <= max_tensor; tp *= 2) {
    for (int pp = 1; pp <= max_pipeline; pp *= 2) {
      const ModelParallelism layout{tp, pp};
      if (MaxBatch(MemoryPerGpu(model, efficiency, layout, gpu, options), gpu_bytes) < 1) {
        continue;
      }
      if (!best || layout.model_parallel_gpus() < best->model_parallel_gpus() ||
          (layout.model_parallel_gpus() == best->model_parallel_gpus() &&
           layout.tensor > best->tensor)) {
        best = layout;
      }
      break;  // larger PP with this TP only uses more GPUs
    }
  }
  return best;
}

double CheckpointBytes(const ModelSpec& model) {
  const StateBytesPerParameter s = StateBytesFor(model.precision, model.optimizer);
  return model.parameters * (s.weights + s.optimizer);
}

double CheckpointSeconds(const ModelSpec& model, double storage_gbps) {
  CHECK(storage_gbps > 0, "storage bandwidth must be > 0");
  return CheckpointBytes(model) / (storage_gbps * 1e9);
}

}  // namespace clustersim
