// Throughput and goodput of a training job versus batch size (docs/models.md#goodput): how many
// samples per second a model trains on a GPU type under a tensor x pipeline x data parallel layout,
// and how much of it is useful progress (statistical efficiency). Pure functions and an immutable
// ThroughputModel; no state. docs/model-validation.md compares it with published measurements
// (`clustersim validate-models`).
//
// One micro-batch of b samples per GPU, on one pipeline stage (L/PP layers, 1/TP of each):
//   t_compute = b x (F_exec - F_att + F_att / e_att) / (TP x PP x u x g(b) x peak)
//               + b x c x k_stage / HBM bandwidth + (L / PP) tau
//     F_exec: FLOPs per sample including recomputation (ExecutedFlopsPerSample), F_att its
//       attention-score products, which run at e_att (ModelEfficiency::attention_efficiency) of
//       the matrix products' efficiency;
//     peak: the GPU's dense peak for the job's precision (16-bit, TF32 or FP32);
//     u: the achieved fraction of peak at saturation, measured per chip, model class and precision
//       (ModelEfficiency::chips) x the model's own efficiency x the software stack's factor;
//       a GPU whose chip has no entry takes the reference GPU's fraction scaled by the hardware
//       catalog's per-family speedups;
//     g(b): for transformers when the catalog sets gemm_intensity, the fraction of the compute
//       rate the layer's weight GEMMs reach at their arithmetic intensity (smoothed roofline,
//       Williams et al. 2009): over QKV (k = h, n = 3h/TP), attention output (h/TP, h), MLP up
//       (h, 4h/TP) and down (4h/TP, h), FLOP weights 3 : 1 : 4 : 4, m = b s tokens, w bytes per
//       element, g = 1 / (1 + (peak / HBM bandwidth) x sum_i weight_i w (1/m + 1/k_i + 1/n_i) / 2);
//       else 1. Larger GEMMs (hidden size, micro-batch) are more efficient, TP shards less;
//     c x k_stage: the memory-bound element-wise work, c (ModelEfficiency::activation_traffic)
//       bytes moved per byte of activations the stage keeps per sample (k_stage: its layers' share
//       of the activations / TP, plus the logits on the last stage); it grows with a s^2 at long
//       sequences and with a stack's activation memory;
//     tau: per-layer time that does not shrink on a faster GPU (launches, small kernels; a
//       software stack may carry its own, Framework::layer_overhead_seconds): it makes
//       small micro-batches inefficient, eff(b) = b / (b + b_half) with b_half = L tau / t_sample.
//   memory-bandwidth floor: a micro-batch reads the weights twice and writes the gradients,
//     t_micro = max(t_compute, (2 W + G) / HBM bandwidth).
//   tensor-parallel all-reduces (Megatron: two in the forward and two in the backward pass of
//     every layer; with sequence parallelism the same volume as reduce-scatter + all-gather,
//     Korthikanti et al. 2022 §4.2.2), of b x s x h activation elements each over the TP ring:
//     t_tp = 4 (L / PP) x RingAllReduce(TP, b s h x bytes) x (1 - TP overlap when enabled).
//   pipeline point-to-point: the stage's output activations forward and their gradients back,
//     b s h / TP elements each way: t_p2p = 2 x (b s h bytes / TP / B_pp + latency).
//   t_stage = t_micro + t_tp + t_p2p.
// A step of N micro-batches per replica (1F1B schedule, Narayanan et al. 2021 §2.2.1: the
// pipeline bubble is (PP - 1) / (N + PP - 1) of the step) over R data-parallel replicas:
//   t_step = (N + PP - 1) x t_stage x straggler + t_optimizer + exposed all-reduce
//   straggler = 1 + cv x sqrt(2 ln n) for n >= 2 GPUs in step (the expected maximum of n
//     normal step times with coefficient of variation cv: every GPU waits for the slowest).
//   t_optimizer = (W + G + 2 O / shards) / HBM bandwidth (read gradients, read and write the
//     optimizer state, write the weights), per GPU.
//   all-reduce of the gradients G over the R replicas of one model-parallel rank (with a
//     distributed optimizer a reduce-scatter, half the traffic, plus an all-gather of the 16-bit
//     weights), ring alpha-beta model: T = 2(R-1)/R x G / B_dp + 2(R-1) x hop latency. It runs
//     in k = ceil(G / bucket) buckets (the stack's, Framework::bucket_bytes) during the backward
//     pass of the last micro-batch only (the earlier micro-batches accumulate locally: PyTorch
//     DistributedDataParallel.no_sync, Li et al. VLDB 2020 §3.2.4; Megatron-Core's schedules run
//     all but the last micro-batch under no_sync_func), a window of W = the backward share of
//     t_micro (2/3 without recomputation, 3/4 with full recomputation). Buckets become ready
//     evenly over W and are sent one after another, T / k each, so the last one ends at
//     max_i (i W / k + (k - i + 1) T / k) and the exposed time is
//       exposed = ExposedBucketedSeconds(T, W, k) = max(T / k, T - W + W / k):
//     one bucket when the window hides the rest, T - W (1 - 1/k) when communication dominates
//     (Li et al. 2020 §3.2.3 describe the overlap; the bucket sizes are the stacks' defaults).
//     An all-reduce after the backward pass (`allreduce_after_backward`) has W = 0: all of T.
//     The distributed optimizer's all-gather mirrors it over the forward pass of the first
//     micro-batch (Megatron-Core --overlap-param-gather): ExposedBucketedSeconds(T_ag, t_micro - W,
//     k). DataParallelSetup::comm_overlap, when set, caps the hidden share at that fraction of T.
//   throughput = R x N x b / t_step samples/s; global batch M = R x N x b.
// Statistical efficiency (McCandlish et al. 2018, "An Empirical Model of Large-Batch Training":
// reaching a loss takes E = E_min (1 + M / phi) samples at batch M, phi the gradient noise scale):
//   E(M) = phi / (phi + M) <= 1, the useful share of a sample compared with a very small batch.
// Goodput = throughput x E(M): samples per second counted at their small-batch usefulness. Only
// ratios of goodput matter to the simulator (Pollux, Qiao et al. OSDI'21, normalizes by the
// reference batch M0 instead: (phi + M0) / (phi + M), the same ratios).
#ifndef CLUSTERSIM_SIM_MODELS_GOODPUT_H_
#define CLUSTERSIM_SIM_MODELS_GOODPUT_H_

#include <cstdint>
#include <optional>

#include "sim/hardware/hardware.h"
#include "sim/models/memory_model.h"
#include "sim/models/model_catalog.h"

namespace clustersim {

// Returns phi / (phi + global_batch), in (0, 1]. REQUIRES: noise_scale > 0, global_batch >= 0.
double StatisticalEfficiency(double noise_scale, double global_batch);

// The communication side of a layout: bandwidths per direction (GB/s) and per-step latencies of
// the rings the job's collectives use (from the topology, or an ideal domain).
struct DataParallelSetup {
  int replicas = 1;                // data-parallel degree (each replica is TP x PP GPUs)
  double ring_gbps = 0;            // data-parallel ring (ignored for 1 replica)
  double hop_latency_seconds = 0;  // per data-parallel ring step
  // At most this fraction of the data-parallel all-reduce may hide behind the backward pass
  // (`clustersim advise --overlap`); < 0 = no cap beyond the bucket pipeline's.
  double comm_overlap = -1;
  double tp_ring_gbps = 0;    // tensor-parallel ring (ignored for TP 1)
  double tp_hop_seconds = 0;  // per tensor-parallel ring step
  double pp_gbps = 0;         // between consecutive pipeline stages (ignored for PP 1)
  double pp_latency_seconds = 0;
};

// Per ring step of an ideal NVLink / PCIe domain (the hardware runtime model's ideal ring).
inline constexpr double kIdealHopSeconds = 2e-6;

// The setup of `replicas` replicas whose data-parallel, tensor-parallel and pipeline rings all run
// in one ideal domain of `gpu` (IdealRingGbps, kIdealHopSeconds): what `clustersim advise` and the
// simulator's model runtime assume without a topology.
DataParallelSetup IdealDataParallelSetup(const GpuSpec& gpu, int replicas);

// Exposed seconds of a collective of `comm_seconds` sent in `buckets` equal buckets that become
// ready evenly over a compute window of `window_seconds` and go one after another:
// max(comm / k, comm - window + window / k). REQUIRES: comm, window >= 0, buckets >= 1.
double ExposedBucketedSeconds(double comm_seconds, double window_seconds, double buckets);

// Settings of a job beyond its model and layout.
struct ThroughputOptions {
  JobSettings settings;                  // per-job precision and sequence length
  const Framework* framework = nullptr;  // software stack; default the reference "pytorch"
  bool distributed_optimizer = false;    // optimizer state sharded over the DP replicas
  bool tp_comm_overlap = false;          // TP communication overlapped with compute
  // Data-parallel all-reduce after the backward pass (not overlapped), and its bytes per
  // parameter (0 = the gradients' own width).
  bool allreduce_after_backward = false;
  double allreduce_bytes_per_parameter = 0;
  bool finetune = false;  // a stack's fine-tuning script (Framework::finetune)
};

struct StepEstimate {
  int64_t micro_batch = 0;     // per GPU
  int64_t accumulation = 1;    // micro-batches per optimizer step
  int64_t global_batch = 0;    // replicas x accumulation x micro_batch
  double compute_seconds = 0;  // (N + PP - 1) x compute part of a stage, with the straggler
  double tp_comm_seconds = 0;  // tensor-parallel all-reduces in the step (exposed part)
  double pp_comm_seconds = 0;  // pipeline sends in the step
  double optimizer_seconds = 0;
  double comm_seconds = 0;  // exposed part of the data-parallel all-reduce
  double step_seconds = 0;
  double samples_per_second = 0;  // whole job
  double statistical_efficiency = 0;
  double goodput = 0;  // samples/s x statistical efficiency
  double mfu = 0;      // model FLOPs per GPU-second / peak dense 16-bit FLOPs
};

class ThroughputModel {
 public:
  // `model`, `efficiency` and `gpu` must outlive this object. `catalog` resolves the model's
  // calibration GPU and the reference GPU; throws InputError when one is not in it, or when the
  // GPU's chip has no efficiency entry and the reference's has none either.
  ThroughputModel(const ModelSpec& model, const ModelEfficiency& efficiency, const GpuSpec& gpu,
                  const HardwareCatalog& catalog, ModelParallelism parallelism = {},
                  ThroughputOptions options = {});

  const ModelSpec& model() const { return *model_; }
  const GpuSpec& gpu() const { return *gpu_; }
  const ModelParallelism& parallelism() const { return parallelism_; }
  const ThroughputOptions& options() const { return options_; }
  // Memory per GPU without optimizer sharding or accumulation buffer.
  const MemoryBreakdown& memory() const { return memory_; }
  // The achieved fraction of peak u this job gets on this GPU.
  double AchievedFraction() const { return fraction_; }

  // Samples/s of one replica at an unbounded micro-batch, compute only.
  double SaturatedSamplesPerSecond() const;
  // Seconds of one micro-batch of `micro_batch` per GPU on one stage: max(compute, bandwidth
  // floor), without communication.
  double MicroBatchSeconds(int64_t micro_batch) const;
  double BandwidthFloorSeconds() const;
  // The fraction of the compute rate a transformer's weight GEMMs reach at `micro_batch` from
  // their arithmetic intensity (1 for other models); see MicroBatchSeconds.
  double GemmEfficiency(int64_t micro_batch) const;

  // REQUIRES: micro_batch >= 1, accumulation >= 1, dp.replicas >= 1.
  StepEstimate Estimate(int64_t micro_batch, int64_t accumulation, const DataParallelSetup& dp,
                        double noise_scale) const;

 private:
  const ModelSpec* model_;
  const ModelEfficiency* efficiency_;
  const GpuSpec* gpu_;
  ModelParallelism parallelism_;
  ThroughputOptions options_;
  MemoryBreakdown memory_;
  double fraction_ = 0;
  double peak_flops_ = 0;      // for the job's precision
  double executed_flops_ = 0;  // per sample
  double model_flops_ = 0;     // per sample, no recomputation
  double layer_overhead_ = 0;  // tau, seconds
  double backward_share_ = 0;  // share of a micro-batch's compute in its backward pass
  double step_time_cv_ = 0;
  double activation_bytes_ = 0;            // bytes per activation element (2 or 4)
  double traffic_seconds_per_sample_ = 0;  // memory-bound element-wise work of one sample
  double bandwidth_bytes_per_second_ = 0;
};

// Returns the configuration for a job on `dp.replicas` replicas, or nullopt when one sample per GPU
// does not fit. Without a target (target_global_batch <= 0): the per-GPU batch in 1..B_max with
// the highest goodput, no accumulation. With a target global batch M: N = ceil(M / (R x B_max))
// accumulation steps and micro-batch ceil(M / (R x N)), the smallest accumulation that reaches M
// (its global batch may exceed M by less than R x N samples).
std::optional<StepEstimate> RecommendBatch(const ThroughputModel& model,
                                           const DataParallelSetup& dp, double noise_scale,
                                           int64_t target_global_batch = 0);

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_MODELS_GOODPUT_H_
