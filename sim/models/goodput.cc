#include "sim/models/goodput.h"

#include <algorithm>
#include <cmath>

#include "sim/hardware/collectives.h"
#include "sim/util/error.h"

namespace clustersim {

double BatchEfficiency(double batch, double batch_half) {
  CHECK(batch > 0, "batch must be > 0");
  return batch / (batch + batch_half);
}

double StatisticalEfficiency(double noise_scale, double reference_batch, double global_batch) {
  return (noise_scale + reference_batch) / (noise_scale + global_batch);
}

ThroughputModel::ThroughputModel(const ModelSpec& model, const GpuSpec& gpu,
                                 const HardwareCatalog& catalog, ModelParallelism parallelism)
    : model_(&model), gpu_(&gpu), parallelism_(parallelism) {
  CHECK(parallelism.tensor >= 1 && parallelism.pipeline >= 1, "parallel degrees must be >= 1");
  const ThroughputCalibration& cal = model.calibration;
  const auto cal_index = catalog.Find(cal.gpu);
  if (!cal_index) {
    throw InputError("model " + model.name + ": calibration GPU \"" + cal.gpu +
                     "\" is not in the hardware catalog; valid types: " + catalog.NameList());
  }
  const GpuSpec& cal_gpu = catalog.gpu(*cal_index);
  const double cal_eff = cal.batch > 0 ? BatchEfficiency(cal.batch, model.batch_half) : 1.0;
  const double cal_sps = cal.samples_per_second > 0
                             ? cal.samples_per_second
                             : cal.mfu * cal_gpu.fp16_tflops * 1e12 / model.flops_per_sample;
  const double saturated_on_cal = cal_sps / cal_eff;
  const double per_gpu =
      saturated_on_cal * gpu.SpeedupFor(model.family) / cal_gpu.SpeedupFor(model.family);
  replica_saturated_sps_ = per_gpu * parallelism.model_parallel_gpus();
  memory_ = MemoryPerGpu(model, parallelism, GpuMemoryBytes(gpu));
  bandwidth_bytes_per_second_ = gpu.memory_bandwidth_gbps * 1e9;
}

double ThroughputModel::BandwidthFloorSeconds() const {
  return (2 * memory_.weights + memory_.gradients) / bandwidth_bytes_per_second_;
}

double ThroughputModel::OptimizerSeconds() const {
  return (memory_.weights + memory_.gradients + 2 * memory_.optimizer) /
         bandwidth_bytes_per_second_;
}

double ThroughputModel::MicroBatchSeconds(int64_t micro_batch) const {
  const double compute =
      (static_cast<double>(micro_batch) + model_->batch_half) / replica_saturated_sps_;
  return std::max(compute, BandwidthFloorSeconds());
}

StepEstimate ThroughputModel::Estimate(int64_t micro_batch, int64_t accumulation,
                                       const DataParallelSetup& dp, double noise_scale) const {
  CHECK(micro_batch >= 1 && accumulation >= 1 && dp.replicas >= 1,
        "micro-batch, accumulation and replicas must be >= 1");
  StepEstimate e;
  e.micro_batch = micro_batch;
  e.accumulation = accumulation;
  e.global_batch = dp.replicas * accumulation * micro_batch;
  const double bubble = 1.0 + (parallelism_.pipeline - 1.0) / static_cast<double>(accumulation);
  e.compute_seconds = static_cast<double>(accumulation) * MicroBatchSeconds(micro_batch) * bubble;
  e.optimizer_seconds = OptimizerSeconds();
  e.comm_seconds = dp.replicas < 2 ? 0.0
                                   : (1.0 - dp.comm_overlap) *
                                         RingAllReduceSeconds(dp.replicas, memory_.gradients,
                                                              dp.ring_gbps, dp.hop_latency_seconds);
  e.step_seconds = e.compute_seconds + e.optimizer_seconds + e.comm_seconds;
  e.samples_per_second = static_cast<double>(e.global_batch) / e.step_seconds;
  e.statistical_efficiency =
      StatisticalEfficiency(noise_scale, model_->reference_batch, e.global_batch);
  e.goodput = e.samples_per_second * e.statistical_efficiency;
  const double gpus = static_cast<double>(dp.replicas) * parallelism_.model_parallel_gpus();
  e.mfu = model_->flops_per_sample * e.samples_per_second / gpus / (gpu_->fp16_tflops * 1e12);
  return e;
}

std::optional<StepEstimate> RecommendBatch(const ThroughputModel& model,
                                           const DataParallelSetup& dp, double noise_scale,
                                           int64_t target_global_batch) {
  const double gpu_bytes = GpuMemoryBytes(model.gpu());
  const int64_t b_max = MaxBatch(model.memory(), gpu_bytes);
  if (b_max < 1) return std::nullopt;
  if (target_global_batch > 0) {
    const int64_t per_replica = (target_global_batch + dp.replicas - 1) / dp.replicas;
    const int64_t accumulation = AccumulationSteps(per_replica, b_max);
    const int64_t micro = (per_replica + accumulation - 1) / accumulation;
    return model.Estimate(micro, accumulation, dp, noise_scale);
  }
  std::optional<StepEstimate> best;
  // Every batch is tried: B_max is at most a few thousand for the catalog's models.
  for (int64_t b = 1; b <= b_max; ++b) {
    const StepEstimate e = model.Estimate(b, 1, dp, noise_scale);
    if (!best || e.goodput > best->goodput) best = e;
  }
  return best;
}

}  // namespace clustersim
