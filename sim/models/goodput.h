// Throughput and goodput of a training job versus batch size (docs/models.md#goodput):
// how many samples per second a model trains on a GPU type, how that scales with data
// parallelism over a ring all-reduce, and how much of it is useful progress (Pollux-style
// statistical efficiency). Pure functions and an immutable ThroughputModel; no state.
//
// Compute (one model replica of TP x PP GPUs, per-GPU micro-batch b):
//   saturated rate R_g (samples/s) on GPU type g = R_c x speedup_g(family) / speedup_c(family),
//     where R_c is the rate on the calibration GPU c: the published samples/s divided by
//     eff(calibration batch), or mfu x peak_c / FLOPs per sample likewise; speedup_* are the
//     hardware catalog's per-family training speedups (sim/data/gpus.json), the same figures the
//     `hardware` runtime model uses. Equivalently the achievable fraction of peak on g is
//     FLOPs per sample x R_g / peak_g (reported as MFU at saturation).
//   batch efficiency eff(b) = b / (b + b_half): a step of b samples costs as much compute as
//     b + b_half samples at the saturated rate (launch overhead, small kernels). So
//     t_compute(b) = (b + b_half) / (R_g x TP x PP)  (model-parallel shards split the work ideally;
//     tensor-parallel communication is not modelled).
//   memory-bandwidth bound: a micro-batch reads the weights twice (forward, backward) and writes
//     the gradients: t_micro(b) = max(t_compute(b), (2 W + G) / HBM bandwidth), W and G the
//     per-GPU weight and gradient bytes (sim/models/memory_model.h).
//   optimizer step, once per step, memory bound: (W + G + 2 O) / HBM bandwidth (read the
//     gradients, read and write the optimizer state O, write the weights).
// A step with accumulation N over R data-parallel replicas (docs/models.md#goodput):
//   t_step = N x t_micro(b) x (1 + (PP - 1) / N)           (pipeline bubble, Narayanan et al. 2021)
//          + t_optimizer + (1 - overlap) x T_comm,
//   T_comm = 2(R-1)/R x G / B_ring + 2(R-1) x hop latency  (ring all-reduce, alpha-beta model)
//   throughput = R x N x b / t_step samples/s; global batch M = R x N x b.
// Statistical efficiency (Pollux, Qiao et al. OSDI'21, from the gradient noise scale phi of
// McCandlish et al. 2018): E(M) = (phi + M0) / (phi + M), M0 the model's reference batch; E > 1
// below M0. Goodput = throughput x E(M): samples/s counted at the reference batch's usefulness.
// The calibrations already include the recipe's activation recomputation and optimizer step.
#ifndef CLUSTERSIM_SIM_MODELS_GOODPUT_H_
#define CLUSTERSIM_SIM_MODELS_GOODPUT_H_

#include <cstdint>
#include <optional>

#include "sim/hardware/hardware.h"
#include "sim/models/memory_model.h"
#include "sim/models/model_catalog.h"

namespace clustersim {

// Returns b / (b + b_half); 1 when b_half is 0. REQUIRES: batch > 0.
double BatchEfficiency(double batch, double batch_half);

// Pollux: (noise_scale + reference_batch) / (noise_scale + global_batch).
double StatisticalEfficiency(double noise_scale, double reference_batch, double global_batch);

// The communication side of data parallelism.
struct DataParallelSetup {
  int replicas = 1;                // data-parallel degree (each replica is TP x PP GPUs)
  double ring_gbps = 0;            // ring bandwidth per direction, GB/s (ignored for 1 replica)
  double hop_latency_seconds = 0;  // per ring step
  double comm_overlap = 0;         // fraction of T_comm hidden behind the backward pass, [0, 1]
};

struct StepEstimate {
  int64_t micro_batch = 0;     // per GPU
  int64_t accumulation = 1;    // micro-batches per optimizer step
  int64_t global_batch = 0;    // replicas x accumulation x micro_batch
  double compute_seconds = 0;  // N x t_micro x bubble factor
  double optimizer_seconds = 0;
  double comm_seconds = 0;  // exposed part of T_comm
  double step_seconds = 0;
  double samples_per_second = 0;  // whole job
  double statistical_efficiency = 0;
  double goodput = 0;  // samples/s x statistical efficiency
  double mfu = 0;      // model FLOPs per GPU-second / peak
};

class ThroughputModel {
 public:
  // `model` and `gpu` must outlive this object. Throws InputError when the model's calibration
  // GPU is not in `catalog`.
  ThroughputModel(const ModelSpec& model, const GpuSpec& gpu, const HardwareCatalog& catalog,
                  ModelParallelism parallelism = {});

  const ModelSpec& model() const { return *model_; }
  const GpuSpec& gpu() const { return *gpu_; }
  const ModelParallelism& parallelism() const { return parallelism_; }
  const MemoryBreakdown& memory() const { return memory_; }

  // Samples/s of one replica at an unbounded batch (eff -> 1), compute only.
  double SaturatedSamplesPerSecond() const { return replica_saturated_sps_; }
  // Seconds of one micro-batch of `micro_batch` per GPU: max(compute, bandwidth floor).
  double MicroBatchSeconds(int64_t micro_batch) const;
  double BandwidthFloorSeconds() const;
  double OptimizerSeconds() const;

  // REQUIRES: micro_batch >= 1, accumulation >= 1, dp.replicas >= 1.
  StepEstimate Estimate(int64_t micro_batch, int64_t accumulation, const DataParallelSetup& dp,
                        double noise_scale) const;

 private:
  const ModelSpec* model_;
  const GpuSpec* gpu_;
  ModelParallelism parallelism_;
  MemoryBreakdown memory_;
  double replica_saturated_sps_ = 0;
  double bandwidth_bytes_per_second_ = 0;
};

// Returns the configuration for a job on `dp.replicas` replicas, or nullopt when one sample per GPU
// does not fit. Without a target (target_global_batch <= 0): the per-GPU batch in 1..B_max with
// the highest goodput, no accumulation. With a target global batch M: N = ceil(M / (R x B_max))
// accumulation steps (docs/models.md#gradient-accumulation) and micro-batch ceil(M / (R x N)), the
// smallest accumulation that reaches M (its global batch may exceed M by less than R x N samples).
std::optional<StepEstimate> RecommendBatch(const ThroughputModel& model,
                                           const DataParallelSetup& dp, double noise_scale,
                                           int64_t target_global_batch = 0);

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_MODELS_GOODPUT_H_
