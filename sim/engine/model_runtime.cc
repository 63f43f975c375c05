#include "sim/engine/model_runtime.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "sim/util/error.h"

namespace clustersim {

ModelRuntime::ModelRuntime(const Trace& trace, const HardwareCatalog& hardware,
                           const ModelCatalog& models, ModelRuntimeOptions options)
    : hardware_(hardware), options_(std::move(options)), jobs_(trace.jobs.size()) {
  CHECK(options_.oom_startup_seconds >= 0 && options_.oom_retries >= 0 &&
            options_.colocation_speed > 0 && options_.colocation_speed <= 1 &&
            options_.storage_gbps >= 0,
        "model runtime options out of range");
  const int types = static_cast<int>(hardware.gpus().size());
  for (int t = 0; t < types; ++t) {
    const GpuSpec& gpu = hardware.gpu(t);
    capacity_.push_back(AllocatableBytes(gpu, models.efficiency()));
  }
  // One entry per (model, precision, sequence length, stated layout) present in the trace.
  std::map<std::tuple<const ModelSpec*, int, int, int, int, int>, int> index;
  for (size_t i = 0; i < trace.jobs.size(); ++i) {
    const Job& job = trace.jobs[i];
    if (job.model.empty()) continue;
    const ModelSpec* spec = models.Find(job.model.str());
    if (spec == nullptr) continue;
    JobSettings settings;
    if (!job.precision.empty()) {
      settings.precision = ParsePrecision(job.precision.str());
      CHECK(settings.precision.has_value(), "a reader accepted an unknown precision");
    }
    settings.sequence_length = job.sequence_length;
    const int precision_key = settings.precision ? static_cast<int>(*settings.precision) : -1;
    // A stated layout (docs/reliability.md#model-parallelism-in-traces) replaces the minimal one,
    // with the optimizer state and the gradients sharded over the data-parallel ranks (fully
    // sharded data parallelism as Llama 3 uses it: Dubey et al. 2024 section 3.3.2).
    const bool stated = job.tensor_parallel > 0 || job.pipeline_parallel > 0;
    const int tp = stated ? std::max(1, static_cast<int>(job.tensor_parallel)) : 0;
    const int pp = stated ? std::max(1, static_cast<int>(job.pipeline_parallel)) : 0;
    const int dp = stated ? std::max(1, job.gpus / (tp * pp)) : 0;
    const auto key = std::make_tuple(spec, precision_key, settings.sequence_length, tp, pp, dp);
    auto it = index.find(key);
    if (it == index.end()) {
      ModelEntry entry{spec, settings, std::vector<PerType>(types)};
      MemoryOptions memory_options = options_.memory;
      memory_options.settings = settings;
      if (stated) {
        memory_options.optimizer_shards = dp;
        memory_options.gradient_shards = dp;
      }
      ThroughputOptions throughput_options;
      throughput_options.settings = settings;
      for (int t = 0; t < types; ++t) {
        const GpuSpec& gpu = hardware.gpu(t);
        PerType& per = entry.types[t];
        per.layout = stated ? std::optional<ModelParallelism>(ModelParallelism{tp, pp})
                            : MinimalModelParallelism(*spec, models.efficiency(), gpu,
                                                      memory_options);
        if (per.layout) {
          per.throughput = std::make_unique<ThroughputModel>(
              *spec, models.efficiency(), gpu, hardware, *per.layout, throughput_options);
          per.memory = MemoryPerGpu(*spec, models.efficiency(), *per.layout, gpu, memory_options);
        }
      }
      it = index.emplace(key, static_cast<int>(models_.size())).first;
      models_.push_back(std::move(entry));
    }
    jobs_[i].model = it->second;
    jobs_[i].user_batch = job.batch_size;
    jobs_[i].gpus = job.gpus;
    ++modelled_;
  }
}

const ModelSpec* ModelRuntime::model(JobId id) const {
  const int m = jobs_[id].model;
  return m < 0 ? nullptr : models_[m].spec;
}

const ModelParallelism* ModelRuntime::layout(JobId id, int type) const {
  CHECK(jobs_[id].model >= 0, "layout of a job without a model");
  const auto& layout = models_[jobs_[id].model].types[type].layout;
  return layout ? &*layout : nullptr;
}

int ModelRuntime::min_gpus(JobId id, int type) const {
  if (jobs_[id].model < 0) return 1;
  const ModelParallelism* l = layout(id, type);
  return l == nullptr ? 0 : l->model_parallel_gpus();
}

double ModelRuntime::MemoryBytes(JobId id, int type, int batch) const {
  const PerType& per = models_[jobs_[id].model].types[type];
  CHECK(per.throughput != nullptr, "memory of a job whose model fits no layout");
  return per.memory.BytesAtBatch(batch);
}

double ModelRuntime::CapacityBytes(int type) const { return capacity_[type]; }

int ModelRuntime::MaxBatch(JobId id, int type) const {
  if (jobs_[id].model < 0) return 0;
  const PerType& per = models_[jobs_[id].model].types[type];
  if (per.throughput == nullptr) return 0;
  const int64_t b = clustersim::MaxBatch(per.memory, GpuMemoryBytes(hardware_.gpu(type)));
  return static_cast<int>(std::min<int64_t>(b, 1 << 20));
}

bool ModelRuntime::Fits(JobId id, int type, int batch) const {
  return batch >= 1 && batch <= MaxBatch(id, type);
}

double ModelRuntime::Goodput(const ModelEntry& m, int type, int gpus, int batch) const {
  const PerType& per = m.types[type];
  const DataParallelSetup dp = IdealDataParallelSetup(
      hardware_.gpu(type), std::max(1, gpus / per.layout->model_parallel_gpus()));
  return per.throughput->Estimate(batch, 1, dp, m.spec->TypicalNoiseScale()).goodput;
}

double ModelRuntime::RateFactor(JobId id, int type, int gpus, int batch) const {
  CHECK(gpus >= 1 && batch >= 1, "rate factor needs gpus >= 1 and batch >= 1");
  const JobEntry& job = jobs_[id];
  if (job.model < 0 || job.user_batch < 1) return 1.0;
  const ModelEntry& m = models_[job.model];
  const PerType& per = m.types[type];
  if (per.throughput == nullptr || gpus < per.layout->model_parallel_gpus()) return 0.0;
  // The user's configuration: requested GPUs (at least one replica) at the user's batch.
  const int user_gpus = std::max(job.gpus, per.layout->model_parallel_gpus());
  return Goodput(m, type, gpus, batch) / Goodput(m, type, user_gpus, job.user_batch);
}

bool ModelRuntime::ScalesWithGpus(JobId id) const {
  const JobEntry& job = jobs_[id];
  return job.model >= 0 && job.user_batch >= 1;
}

int ModelRuntime::BestBatch(JobId id, int type, int gpus) const {
  const int max_batch = MaxBatch(id, type);
  if (max_batch < 1 || gpus < min_gpus(id, type)) return 0;
  const ModelEntry& m = models_[jobs_[id].model];
  // Goodput is unimodal in the batch (throughput rises and saturates, statistical efficiency
  // falls): powers of two up to B_max, and B_max itself, bracket its maximum closely enough.
  int best = 0;
  double best_goodput = 0;
  auto consider = [&](int b) {
    const double g = Goodput(m, type, gpus, b);
    if (g > best_goodput) {
      best_goodput = g;
      best = b;
    }
  };
  int b = 1;
  for (; b <= max_batch / 2; b *= 2) consider(b);
  consider(b);
  if (b != max_batch) consider(max_batch);
  return best;
}

double ShareSpeed(const Job& job, int milli, double colocation_speed) {
  if (milli <= 0 || milli >= 1000) return 1.0;
  if (job.gpu_milli > 0 && milli >= job.gpu_milli) return 1.0;  // ran its trace time on a share
  return std::min(1.0, milli / 500.0 * colocation_speed);
}

double ModelRuntime::CheckpointBytes(JobId id) const {
  const int m = jobs_[id].model;
  return m < 0 ? 0.0 : clustersim::CheckpointBytes(*models_[m].spec);
}

double ModelRuntime::CheckpointSeconds(JobId id) const {
  const int m = jobs_[id].model;
  if (m < 0 || options_.storage_gbps <= 0) return 0.0;
  return clustersim::CheckpointSeconds(*models_[m].spec, options_.storage_gbps);
}

double ModelRuntime::ShareSpeed(const Job& job, int milli) const {
  return clustersim::ShareSpeed(job, milli, options_.colocation_speed);
}

}  // namespace clustersim
