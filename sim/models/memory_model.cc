#include "sim/models/memory_model.h"

#include <cmath>

#include "sim/util/error.h"

namespace clustersim {

StateBytesPerParameter StateBytesFor(Precision precision, Optimizer optimizer) {
  const bool mixed = precision != Precision::kFp32;
  StateBytesPerParameter s;
  s.weights = mixed ? 2 : 4;
  s.gradients = mixed ? 2 : 4;
  // Mixed precision keeps an FP32 master copy in the optimizer (ZeRO §3.1).
  const double master = mixed ? 4 : 0;
  switch (optimizer) {
    case Optimizer::kAdam:
      s.optimizer = master + 4 + 4;
      break;  // m and v in FP32
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

MemoryBreakdown MemoryPerGpu(const ModelSpec& model, const ModelParallelism& parallelism,
                             double gpu_memory_bytes, const MemoryOptions& options) {
  CHECK(parallelism.tensor >= 1 && parallelism.pipeline >= 1,
        "model parallel degrees must be >= 1");
  const StateBytesPerParameter per_param =
      options.state ? *options.state : StateBytesFor(model.precision, model.optimizer);
  const double shards = parallelism.model_parallel_gpus();
  const double params = model.parameters / shards;
  MemoryBreakdown m;
  m.weights = params * per_param.weights;
  m.gradients = params * per_param.gradients;
  m.optimizer = params * per_param.optimizer;
  m.workspace = options.workspace_fraction * m.weights;
  m.activation_per_sample = model.activation_bytes_per_sample / parallelism.tensor;
  m.reserved = options.reserved_fraction * gpu_memory_bytes;
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
  return MaxBatch(gpu_bytes, memory.static_bytes(), memory.reserved, memory.activation_per_sample);
}

bool Fits(const MemoryBreakdown& memory, int64_t batch, double gpu_bytes) {
  return batch <= MaxBatch(memory, gpu_bytes);
}

int64_t AccumulationSteps(int64_t target_batch, int64_t max_batch) {
  CHECK(target_batch >= 1 && max_batch >= 1, "batches must be >= 1");
  return (target_batch + max_batch - 1) / max_batch;
}

std::optional<ModelParallelism> MinimalModelParallelism(const ModelSpec& model, const GpuSpec& gpu,
                                                        int max_tensor, int max_pipeline) {
  const double gpu_bytes = GpuMemoryBytes(gpu);
  std::optional<ModelParallelism> best;
  for (int tp = 1; tp <= max_tensor; tp *= 2) {
    for (int pp = 1; pp <= max_pipeline; pp *= 2) {
      const ModelParallelism layout{tp, pp};
      if (MaxBatch(MemoryPerGpu(model, layout, gpu_bytes), gpu_bytes) < 1) continue;
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
