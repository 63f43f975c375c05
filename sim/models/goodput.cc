#include "sim/models/goodput.h"

#include <algorithm>
#include <cmath>

#include "sim/hardware/collectives.h"
#include "sim/util/error.h"

namespace clustersim {
namespace {

double MapOr(const std::map<std::string, double>& map, const std::string& key, double fallback) {
  const auto it = map.find(key);
  return it == map.end() ? fallback : it->second;
}

// The achieved fraction of `gpu`'s peak for `model` at `precision` on the reference stack, before
// the model's own efficiency. A chip without an entry takes the reference GPU's rate scaled by the
// hardware catalog's per-family speedup.
double ClassFraction(const ModelSpec& model, const ModelEfficiency& efficiency, const GpuSpec& gpu,
                     const HardwareCatalog& catalog, Precision precision) {
  const std::string cls = model.EfficiencyClass();
  const std::string group = PrecisionGroup(precision);
  if (auto u = efficiency.Fraction(gpu.chip, cls, group)) return *u;
  const GpuSpec& ref =
      catalog.gpu(catalog.Require(catalog.reference(), "hardware catalog", "reference"));
  const auto u_ref = efficiency.Fraction(ref.chip, cls, group);
  if (!u_ref) {
    throw InputError("model " + model.name + ": no measured efficiency for " + cls + " / " + group +
                     " on GPU " + gpu.name + " (chip \"" + gpu.chip +
                     "\") nor on the reference GPU " + ref.name);
  }
  const double rate_ratio = gpu.SpeedupFor(model.family) / ref.SpeedupFor(model.family);
  return *u_ref * rate_ratio * ref.PeakTflops(group) / gpu.PeakTflops(group);
}

}  // namespace

DataParallelSetup IdealDataParallelSetup(const GpuSpec& gpu, int replicas) {
  DataParallelSetup dp;
  dp.replicas = replicas;
  dp.ring_gbps = IdealRingGbps(gpu);
  dp.hop_latency_seconds = kIdealHopSeconds;
  dp.tp_ring_gbps = dp.ring_gbps;
  dp.tp_hop_seconds = kIdealHopSeconds;
  dp.pp_gbps = dp.ring_gbps;
  dp.pp_latency_seconds = kIdealHopSeconds;
  return dp;
}

double ExposedBucketedSeconds(double comm_seconds, double window_seconds, double buckets) {
  CHECK(comm_seconds >= 0 && window_seconds >= 0 && buckets >= 1,
        "bucketed collective needs comm, window >= 0 and at least one bucket");
  return std::max(comm_seconds / buckets, comm_seconds - window_seconds + window_seconds / buckets);
}

double StatisticalEfficiency(double noise_scale, double global_batch) {
  CHECK(noise_scale > 0 && global_batch >= 0, "noise scale must be > 0");
  return noise_scale / (noise_scale + global_batch);
}

ThroughputModel::ThroughputModel(const ModelSpec& model, const ModelEfficiency& efficiency,
                                 const GpuSpec& gpu, const HardwareCatalog& catalog,
                                 ModelParallelism parallelism, ThroughputOptions options)
    : model_(&model),
      efficiency_(&efficiency),
      gpu_(&gpu),
      parallelism_(parallelism),
      options_(options) {
  CHECK(parallelism.tensor >= 1 && parallelism.pipeline >= 1, "parallel degrees must be >= 1");
  const Framework& framework =
      options_.framework ? *options_.framework : efficiency.FrameworkNamed("pytorch");
  options_.framework = &framework;
  const Precision precision = EffectivePrecision(model, options_.settings);
  const std::string cls = model.EfficiencyClass();
  MemoryOptions memory_options;
  memory_options.settings = options_.settings;
  memory_options.framework = &framework;
  memory_ = MemoryPerGpu(model, efficiency, parallelism, gpu, memory_options);
  bandwidth_bytes_per_second_ = gpu.memory_bandwidth_gbps * 1e9;
  peak_flops_ = gpu.PeakTflops(PrecisionGroup(precision)) * 1e12;
  {
    // Attention products at their lower efficiency count as that many more matrix FLOPs.
    const double attention = AttentionFlopsPerSample(model, options_.settings);
    executed_flops_ = ExecutedFlopsPerSample(model, options_.settings) +
                      attention * (1.0 / efficiency.attention_efficiency - 1.0);
  }
  model_flops_ = FlopsPerSample(model, options_.settings);
  // The forward pass is a third of the model FLOPs (backward = 2 x forward, Kaplan et al. 2020);
  // recomputation runs in the backward pass.
  backward_share_ = 1.0 - model_flops_ / 3.0 / ExecutedFlopsPerSample(model, options_.settings);
  layer_overhead_ = MapOr(framework.layer_overhead_seconds, cls,
                          MapOr(efficiency.layer_overhead_seconds, cls, 0.0));
  step_time_cv_ = MapOr(efficiency.step_time_cv, cls, 0.0);
  activation_bytes_ = IsMixed(precision) ? 2.0 : 4.0;
  {
    ModelSpec layers_only = model;
    layers_only.vocab_size = 0;
    const double layers = ActivationBytesPerSample(layers_only, options_.settings, framework);
    const double logits = ActivationBytesPerSample(model, options_.settings, framework) - layers;
    const double stage = (layers / parallelism.pipeline + logits) / parallelism.tensor;
    traffic_seconds_per_sample_ =
        efficiency.activation_traffic * stage / (gpu.memory_bandwidth_gbps * 1e9);
  }
  double model_efficiency = model.efficiency;
  if (model.calibration) {
    // The model's efficiency is whatever makes the calibration measurement come out: one GPU of
    // the calibration type at its batch, default settings, reference stack. Fixed point (the
    // per-layer overhead does not scale with u): three rounds converge to well under 0.1%.
    const ThroughputCalibration& cal = *model.calibration;
    const GpuSpec& cal_gpu =
        catalog.gpu(catalog.Require(cal.gpu, "model " + model.name, "calibration.gpu"));
    ModelSpec probe = model;
    probe.calibration.reset();
    probe.efficiency = 1.0;
    const double measured = cal.samples_per_second > 0 ? cal.samples_per_second
                                                       : cal.mfu * cal_gpu.fp16_tflops * 1e12 /
                                                             FlopsPerSample(model, JobSettings{});
    for (int round = 0; round < 3; ++round) {
      const ThroughputModel m(probe, efficiency, cal_gpu, catalog);
      const double predicted =
          m.Estimate(cal.batch, 1, DataParallelSetup{}, model.TypicalNoiseScale())
              .samples_per_second;
      probe.efficiency *= measured / predicted;
    }
    model_efficiency = probe.efficiency;
  }
  fraction_ =
      ClassFraction(model, efficiency, gpu, catalog, precision) * model_efficiency *
      framework.ThroughputFactor(cls, gpu.chip, PrecisionGroup(precision), options_.finetune);
}

double ThroughputModel::SaturatedSamplesPerSecond() const {
  const double gemm = GemmEfficiency(int64_t{1} << 40);  // m -> infinity
  return 1.0 /
         (executed_flops_ / (parallelism_.model_parallel_gpus() * fraction_ * peak_flops_ * gemm) +
          traffic_seconds_per_sample_);
}

double ThroughputModel::BandwidthFloorSeconds() const {
  return (2 * memory_.weights + memory_.gradients) / bandwidth_bytes_per_second_;
}

double ThroughputModel::GemmEfficiency(int64_t micro_batch) const {
  if (!efficiency_->gemm_intensity || !model_->IsTransformer()) return 1.0;
  // A layer's four weight GEMMs on one tensor-parallel rank, m = b s tokens: QKV (k = h,
  // n = 3h/TP), attention output (h/TP, h), MLP up (h, 4h/TP) and down (4h/TP, h), weighted by
  // their FLOPs 3 : 1 : 4 : 4. Each moves at least w (mk + kn + mn) bytes for 2 mnk FLOPs; with
  // its time the sum of compute and memory time (a smoothed roofline, Williams et al. 2009), it
  // runs at 1 / (1 + ridge / I) of the compute rate, I = 2 / (w (1/m + 1/k + 1/n)) FLOPs per byte.
  const double m = static_cast<double>(micro_batch) * EffectiveSequence(*model_, options_.settings);
  const double h = model_->hidden_size, tp = parallelism_.tensor;
  const double w = activation_bytes_;
  auto inverse_intensity = [&](double k, double n) { return w / 2.0 * (1 / m + 1 / k + 1 / n); };
  const double weighted = (3 * inverse_intensity(h, 3 * h / tp) + inverse_intensity(h / tp, h) +
                           8 * inverse_intensity(h, 4 * h / tp)) /
                          12.0;
  return 1.0 / (1.0 + peak_flops_ / bandwidth_bytes_per_second_ * weighted);
}

double ThroughputModel::MicroBatchSeconds(int64_t micro_batch) const {
  const double b = static_cast<double>(micro_batch);
  const double compute = b * executed_flops_ /
                             (parallelism_.model_parallel_gpus() * fraction_ * peak_flops_ *
                              GemmEfficiency(micro_batch)) +
                         b * traffic_seconds_per_sample_ +
                         layer_overhead_ * model_->layers / parallelism_.pipeline;
  return std::max(compute, BandwidthFloorSeconds());
}

StepEstimate ThroughputModel::Estimate(int64_t micro_batch, int64_t accumulation,
                                       const DataParallelSetup& dp, double noise_scale) const {
  CHECK(micro_batch >= 1 && accumulation >= 1 && dp.replicas >= 1,
        "micro-batch, accumulation and replicas must be >= 1");
  const double b = static_cast<double>(micro_batch);
  const double tp = parallelism_.tensor, pp = parallelism_.pipeline;
  const double stage_layers = model_->layers / pp;
  // Activation elements crossing a TP all-reduce or a stage boundary per micro-batch.
  const double token_elements =
      model_->IsTransformer()
          ? b * EffectiveSequence(*model_, options_.settings) * model_->hidden_size
          : 0.0;
  double tp_per_micro = 0;
  if (tp > 1 && token_elements > 0) {
    tp_per_micro = 4.0 * stage_layers *
                   RingAllReduceSeconds(parallelism_.tensor, token_elements * activation_bytes_,
                                        dp.tp_ring_gbps, dp.tp_hop_seconds) *
                   (options_.tp_comm_overlap ? 1.0 - efficiency_->tp_overlap : 1.0);
  }
  double pp_per_micro = 0;
  if (pp > 1 && token_elements > 0) {
    CHECK(dp.pp_gbps > 0, "pipeline parallelism needs a stage-to-stage bandwidth");
    pp_per_micro = 2.0 * (token_elements * activation_bytes_ / tp / (dp.pp_gbps * 1e9) +
                          dp.pp_latency_seconds);
  }
  const double micro = MicroBatchSeconds(micro_batch);
  const double slots = static_cast<double>(accumulation) + pp - 1.0;  // 1F1B with the bubble
  const double gpus = static_cast<double>(dp.replicas) * parallelism_.model_parallel_gpus();
  const double straggler = gpus >= 2 ? 1.0 + step_time_cv_ * std::sqrt(2.0 * std::log(gpus)) : 1.0;

  StepEstimate e;
  e.micro_batch = micro_batch;
  e.accumulation = accumulation;
  e.global_batch = dp.replicas * accumulation * micro_batch;
  e.compute_seconds = slots * micro * straggler;
  e.tp_comm_seconds = slots * tp_per_micro;
  e.pp_comm_seconds = slots * pp_per_micro;
  const double shards = options_.distributed_optimizer ? dp.replicas : 1.0;
  e.optimizer_seconds = (memory_.weights + memory_.gradients + 2 * memory_.optimizer / shards) /
                        bandwidth_bytes_per_second_;
  if (dp.replicas >= 2) {
    // All-reduce of the gradients; with a distributed optimizer a reduce-scatter of them (half
    // the traffic) and an all-gather of the 16-bit weights that overlaps the first forward pass.
    const double parameters = model_->parameters / parallelism_.model_parallel_gpus();
    const double grad_bytes = options_.allreduce_bytes_per_parameter > 0
                                  ? options_.allreduce_bytes_per_parameter * parameters
                                  : memory_.gradients;
    const Framework& framework = *options_.framework;
    const double bucket_bytes =
        framework.bucket_parameters > 0
            ? std::max(framework.bucket_parameters,
                       framework.bucket_parameters_per_replica * dp.replicas) *
                  grad_bytes / parameters
        : framework.bucket_bytes > 0 ? framework.bucket_bytes
                                     : efficiency_->bucket_bytes;
    const double buckets = std::max(1.0, std::ceil(grad_bytes / bucket_bytes));
    double total =
        RingAllReduceSeconds(dp.replicas, grad_bytes, dp.ring_gbps, dp.hop_latency_seconds);
    if (options_.distributed_optimizer) total *= 0.5;
    const double backward = options_.allreduce_after_backward ? 0.0 : backward_share_ * micro;
    double exposed = ExposedBucketedSeconds(total, backward, buckets);
    if (dp.comm_overlap >= 0) exposed = std::max(exposed, (1.0 - dp.comm_overlap) * total);
    if (options_.distributed_optimizer) {
      const double gather = 0.5 * RingAllReduceSeconds(dp.replicas, memory_.weights, dp.ring_gbps,
                                                       dp.hop_latency_seconds);
      exposed += ExposedBucketedSeconds(gather, (1.0 - backward_share_) * micro, buckets);
    }
    e.comm_seconds = exposed;
  }
  e.step_seconds = e.compute_seconds + e.tp_comm_seconds + e.pp_comm_seconds + e.optimizer_seconds +
                   e.comm_seconds;
  e.samples_per_second = static_cast<double>(e.global_batch) / e.step_seconds;
  e.statistical_efficiency =
      StatisticalEfficiency(noise_scale, static_cast<double>(e.global_batch));
  e.goodput = e.samples_per_second * e.statistical_efficiency;
  e.mfu = model_flops_ * e.samples_per_second / gpus / (gpu_->fp16_tflops * 1e12);
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
