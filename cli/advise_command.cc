#include "cli/advise_command.h"

#include <boost/program_options.hpp>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "app/options.h"
#include "sim/hardware/hardware.h"
#include "sim/models/goodput.h"
#include "sim/models/memory_model.h"
#include "sim/models/model_catalog.h"
#include "sim/util/error.h"

namespace po = boost::program_options;

namespace clustersim {
namespace {

constexpr double kGib = 1073741824.0;

std::string Count(double n) {
  char buffer[32];
  if (n >= 1e9) {
    std::snprintf(buffer, sizeof buffer, "%.3gB", n / 1e9);
  } else {
    std::snprintf(buffer, sizeof buffer, "%.3gM", n / 1e6);
  }
  return buffer;
}

std::string OptimizerParts(const ModelSpec& m, Precision precision,
                           const StateBytesPerParameter& s) {
  const bool mixed = IsMixed(precision);
  std::string parts = mixed ? "FP32 master 4" : "";
  auto add = [&](const char* part) { parts += (parts.empty() ? "" : ", ") + std::string(part); };
  switch (m.optimizer) {
    case Optimizer::kAdam:
      add("Adam m 4");
      add("v 4");
      break;
    case Optimizer::kSgdMomentum:
      add("momentum 4");
      break;
    case Optimizer::kSgd:
      break;
  }
  char buffer[96];
  std::snprintf(buffer, sizeof buffer, "%g B/param%s%s%s", s.optimizer, parts.empty() ? "" : ": ",
                parts.c_str(), "");
  return buffer;
}

ModelCatalog LoadModels(const std::string& path) {
  return path.empty() ? ModelCatalog::Default() : ModelCatalog::FromFile(path);
}

HardwareCatalog LoadHardware(const std::string& path) {
  return path.empty() ? HardwareCatalog::Default() : HardwareCatalog::FromFile(path);
}

}  // namespace

void PrintModelList(const char* models_path, bool verbose) {
  const ModelCatalog catalog = LoadModels(models_path ? models_path : "");
  std::printf("%-12s %-11s %-8s %7s %6s %6s %6s %6s %-10s %-12s %-9s %10s %10s %13s\n", "name",
              "family", "arch", "params", "layers", "hidden", "heads", "seq", "precision",
              "optimizer", "recompute", "act_MB/smp", "GFLOP/smp", "noise_scale");
  for (const ModelSpec& m : catalog.models()) {
    char noise[32];
    std::snprintf(noise, sizeof noise, "%.0f-%.0f", m.noise_scale_min, m.noise_scale_max);
    const std::string seq = m.sequence_length > 0 ? std::to_string(m.sequence_length)
                                                  : std::to_string(m.image_size) + "px";
    std::printf("%-12s %-11s %-8s %7s %6d %6d %6d %6s %-10s %-12s %-9s %10.1f %10.1f %13s\n",
                m.name.c_str(), m.family.c_str(), m.architecture.c_str(),
                Count(m.parameters).c_str(), m.layers, m.hidden_size, m.attention_heads,
                seq.c_str(), PrecisionName(m.precision), OptimizerName(m.optimizer),
                RecomputationName(m.recomputation), m.activation_bytes_per_sample / 1e6,
                m.flops_per_sample / 1e9, noise);
    if (verbose) {
      std::printf("    model:       %s\n", m.source.c_str());
      std::printf("    activations: %s\n", m.activation_source.c_str());
      std::printf("    FLOPs:       %s\n", m.flops_source.c_str());
      std::printf("    noise scale: %s\n", m.noise_source.c_str());
      std::printf("    efficiency:  %g (%s)\n", m.efficiency, m.efficiency_source.c_str());
      if (m.calibration) std::printf("    calibration: %s\n", m.calibration->source.c_str());
    }
  }
}

int CommandAdvise(int argc, char** argv) {
  std::string model_name, gpu_name, models_path, hardware_path;
  int gpus = 1, tp = 1, pp = 1, sequence = 0;
  int64_t global_batch = 0;
  std::string precision_text;
  double noise_scale = 0, overlap = -1, storage_gbps = 2.0;
  po::options_description desc(
      "clustersim advise --model M --gpu G [--gpus N] [--global-batch B]: memory, the largest\n"
      "batch that fits, throughput and goodput versus batch size, and a recommended\n"
      "configuration (per-GPU batch, gradient accumulation) for one model on one GPU type.\n"
      "Tensor-parallel, pipeline and data-parallel rings are ideal (one NVLink domain, or "
      "PCIe).\n\noptions");
  desc.add_options()("help,h", "show this help")("model", po::value(&model_name),
                                                 "model name (clustersim list models)")(
      "gpu", po::value(&gpu_name), "GPU type (clustersim list gpus)")(
      "gpus", po::value(&gpus)->default_value(1), "GPUs in all (data parallel x TP x PP)")(
      "global-batch", po::value(&global_batch)->default_value(0),
      "target global batch, samples (0 = the goodput-optimal batch)")(
      "tp", po::value(&tp)->default_value(1), "tensor-parallel degree")(
      "pp", po::value(&pp)->default_value(1), "pipeline-parallel degree")(
      "precision", po::value(&precision_text),
      "fp32, tf32, mixed-fp16 or mixed-bf16 (default: the model's recipe)")(
      "sequence", po::value(&sequence)->default_value(0),
      "tokens per sample, or image pixels per side (default: the model's)")(
      "noise-scale", po::value(&noise_scale),
      "gradient noise scale, samples (default: geometric mean of the model's range)")(
      "overlap", po::value(&overlap),
      "largest fraction of the data-parallel all-reduce hidden behind the backward pass, 0..1 "
      "(default: no cap; the buckets overlap the last backward pass, docs/models.md#goodput)")(
      "storage-gbps", po::value(&storage_gbps)->default_value(2.0),
      "checkpoint storage bandwidth, GB/s")("models", po::value(&models_path),
                                            "model catalog JSON (default: built in)")(
      "hardware", po::value(&hardware_path), "hardware catalog JSON (default: built in)");
  po::variables_map vm;
  if (!ParseOptions(argc, argv, desc, &vm)) return 0;
  const ModelCatalog models = LoadModels(models_path);
  const HardwareCatalog hardware = LoadHardware(hardware_path);
  if (model_name.empty()) {
    throw InputError("advise: --model is required; valid models: " + models.NameList());
  }
  if (gpu_name.empty()) {
    throw InputError("advise: --gpu is required; valid types: " + hardware.NameList());
  }
  const ModelSpec& model = models.Require(model_name);
  const auto gpu_index = hardware.Find(gpu_name);
  if (!gpu_index) {
    throw InputError("unknown GPU type \"" + gpu_name + "\"; valid types: " + hardware.NameList());
  }
  const GpuSpec& gpu = hardware.gpu(*gpu_index);
  if (tp < 1 || pp < 1 || gpus < 1) throw InputError("advise: --gpus, --tp, --pp must be >= 1");
  if (gpus % (tp * pp) != 0) {
    throw InputError("advise: --gpus " + std::to_string(gpus) +
                     " is not a multiple of TP x PP = " + std::to_string(tp * pp));
  }
  if (global_batch < 0) throw InputError("advise: --global-batch must be >= 0");
  if (vm.count("overlap") && (overlap < 0 || overlap > 1)) {
    throw InputError("advise: --overlap must be in [0, 1]");
  }
  if (sequence < 0) throw InputError("advise: --sequence must be >= 0");
  JobSettings settings;
  settings.sequence_length = sequence;
  if (!precision_text.empty()) {
    settings.precision = ParsePrecision(precision_text);
    if (!settings.precision) {
      throw InputError(
          "advise: --precision: expected fp32, tf32, mixed-fp16 or mixed-bf16, got \"" +
          precision_text + "\"");
    }
  }
  if (!(storage_gbps > 0)) throw InputError("advise: --storage-gbps must be > 0");
  if (vm.count("noise-scale") && !(noise_scale > 0)) {
    throw InputError("advise: --noise-scale must be > 0");
  }
  if (!vm.count("noise-scale")) noise_scale = model.TypicalNoiseScale();

  const ModelParallelism layout{tp, pp};
  ThroughputOptions throughput_options;
  throughput_options.settings = settings;
  const ThroughputModel perf(model, models.efficiency(), gpu, hardware, layout, throughput_options);
  const MemoryBreakdown& mem = perf.memory();
  const double gpu_bytes = GpuMemoryBytes(gpu);
  const int64_t b_max = MaxBatch(mem, gpu_bytes);
  DataParallelSetup dp = IdealDataParallelSetup(gpu, gpus / (tp * pp));
  dp.comm_overlap = overlap;

  const Precision precision = EffectivePrecision(model, settings);
  const StateBytesPerParameter per_param = StateBytesFor(precision, model.optimizer);
  const double shards = layout.model_parallel_gpus();
  std::printf("advise: %s on %s, %d GPU%s (data parallel %d x TP %d x PP %d)\n", model.name.c_str(),
              gpu.name.c_str(), gpus, gpus == 1 ? "" : "s", dp.replicas, tp, pp);
  std::string shape = Count(model.parameters) + " parameters, " + std::to_string(model.layers) +
                      " layers, hidden " + std::to_string(model.hidden_size);
  if (model.attention_heads > 0) shape += ", " + std::to_string(model.attention_heads) + " heads";
  if (model.IsTransformer()) {
    shape += ", sequence " + std::to_string(EffectiveSequence(model, settings));
  } else if (model.image_size > 0) {
    shape += ", image " + std::to_string(EffectiveSequence(model, settings)) + "px";
  }
  std::printf("model   %s; %s, %s, activation recomputation %s\n", shape.c_str(),
              PrecisionName(precision), OptimizerName(model.optimizer),
              RecomputationName(model.recomputation));
  std::printf("memory per GPU (GiB; model state / TP x PP = %g, activations / TP = %d)\n", shards,
              tp);
  std::printf("  %-20s %9.2f   (%g B/param)\n", "weights", mem.weights / kGib, per_param.weights);
  std::printf("  %-20s %9.2f   (%g B/param)\n", "gradients", mem.gradients / kGib,
              per_param.gradients);
  std::printf("  %-20s %9.2f   (%s)\n", "optimizer state", mem.optimizer / kGib,
              OptimizerParts(model, precision, per_param).c_str());
  std::printf("  %-20s %9.2f   (M_state x (1 + %.0f%% allocator fragmentation))\n", "static total",
              mem.static_bytes() / kGib, 100 * mem.fragmentation);
  std::printf("  %-20s %9.4f   (k x (1 + fragmentation), per sample of the micro-batch)\n",
              "activations/sample", mem.per_sample_bytes() / kGib);
  std::printf(
      "  %-20s %9.2f   (%.2f GiB the driver keeps + %.2f GiB CUDA context, library "
      "workspaces and NCCL buffers)\n",
      "reserved", mem.reserved / kGib, (mem.reserved - mem.runtime_overhead) / kGib,
      mem.runtime_overhead / kGib);
  if (b_max < 1) {
    MemoryOptions memory_options;
    memory_options.settings = settings;
    const auto needed = MinimalModelParallelism(model, models.efficiency(), gpu, memory_options);
    std::string advice;
    if (needed) {
      const MemoryBreakdown split =
          MemoryPerGpu(model, models.efficiency(), *needed, gpu, memory_options);
      advice = "; it needs model parallelism: TP " + std::to_string(needed->tensor) + " x PP " +
               std::to_string(needed->pipeline) + " (" +
               std::to_string(needed->model_parallel_gpus()) + " GPUs per replica, B_max " +
               std::to_string(MaxBatch(split, gpu_bytes)) + "); try --tp " +
               std::to_string(needed->tensor) + " --pp " + std::to_string(needed->pipeline) +
               " --gpus " + std::to_string(needed->model_parallel_gpus());
    } else {
      advice = "; no TP <= 8 x PP <= 128 layout fits either";
    }
    char head[256];
    std::snprintf(head, sizeof head,
                  "%s does not fit on %s with TP %d x PP %d even at batch 1: M(1) = %.2f GiB + "
                  "reserved %.2f GiB > %.0f GiB",
                  model.name.c_str(), gpu.name.c_str(), tp, pp, mem.BytesAtBatch(1) / kGib,
                  mem.reserved / kGib, gpu.memory_gib);
    throw InputError(head + advice);
  }
  std::printf(
      "  %-20s %9lld   (floor((M_gpu - reserved - static) / per sample); M(B_max) = %.2f "
      "GiB)\n",
      "B_max", static_cast<long long>(b_max), mem.BytesAtBatch(b_max) / kGib);

  std::printf(
      "\nthroughput and goodput (per-GPU batch, no accumulation; achieved fraction of peak %.3f, "
      "noise scale %.0f%s)\n",
      perf.AchievedFraction(), noise_scale,
      dp.replicas > 1 || tp > 1 || pp > 1
          ? (", rings " + std::to_string(static_cast<int>(dp.ring_gbps)) + " GB/s").c_str()
          : "");
  std::printf("  %8s %8s %10s %10s %12s %6s %9s %12s %9s\n", "batch", "global", "step_s", "tp_s",
              "samples/s", "MFU", "stat_eff", "goodput", "mem_GiB");
  std::vector<int64_t> batches;
  for (int64_t b = 1; b < b_max; b *= 2) batches.push_back(b);
  batches.push_back(b_max);
  for (int64_t b : batches) {
    const StepEstimate e = perf.Estimate(b, 1, dp, noise_scale);
    std::printf("  %8lld %8lld %10.4f %10.4f %12.1f %5.1f%% %9.3f %12.1f %9.2f\n",
                static_cast<long long>(b), static_cast<long long>(e.global_batch), e.step_seconds,
                e.tp_comm_seconds, e.samples_per_second, 100 * e.mfu, e.statistical_efficiency,
                e.goodput, mem.BytesAtBatch(b) / kGib);
  }
  const auto best = RecommendBatch(perf, dp, noise_scale, global_batch);
  CHECK(best.has_value(), "a batch fits, so a recommendation exists");
  std::printf("\nrecommended: per-GPU batch %lld, accumulation %lld, global batch %lld%s\n",
              static_cast<long long>(best->micro_batch), static_cast<long long>(best->accumulation),
              static_cast<long long>(best->global_batch),
              global_batch > 0 ? (" (target " + std::to_string(global_batch) + ")").c_str()
                               : " (highest goodput)");
  std::printf(
      "  %.1f samples/s, goodput %.1f (statistical efficiency %.3f), step %.4f s (compute %.4f, "
      "tensor-parallel %.4f, pipeline %.4f, optimizer %.4f, all-reduce %.4f), memory %.2f of "
      "%.0f GiB\n",
      best->samples_per_second, best->goodput, best->statistical_efficiency, best->step_seconds,
      best->compute_seconds, best->tp_comm_seconds, best->pp_comm_seconds, best->optimizer_seconds,
      best->comm_seconds, mem.BytesAtBatch(best->micro_batch) / kGib, gpu.memory_gib);
  std::printf("checkpoint: %.2f GB of model state, save or restore %.1f s each at %.1f GB/s\n",
              CheckpointBytes(model) / 1e9, CheckpointSeconds(model, storage_gbps), storage_gbps);
  return 0;
}

}  // namespace clustersim
