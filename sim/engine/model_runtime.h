// The model-aware side of a run (docs/models.md): for every job that names a model of the catalog
// (from the trace or from workloads/model_assignment.h), its per-GPU memory M(B) on each GPU type,
// the largest batch that fits, whether its user's batch runs out of memory, and how fast it
// progresses on another GPU count or batch than its user asked for. Built once per run from the
// trace and the catalogs; immutable afterwards, so policies may query it freely.
//
// Per-job settings: a job's precision and sequence length (Job::precision, Job::sequence_length;
// empty or 0 = the model's default) change its memory and FLOPs per sample; the runtime keeps one
// entry per (model, precision, sequence length, stated layout) in the trace.
//
// Memory per GPU (sim/models/memory_model.h): the job's model-parallel layout on a GPU type is the
// one its trace states (Job::tensor_parallel, pipeline_parallel; the optimizer state and the
// gradients then sharded over its data-parallel ranks), else the smallest TP x PP with which one
// sample fits (MinimalModelParallelism; 1 x 1 for every model but the largest), replicated by
// data parallelism over the job's GPUs. M(B) = (1 + f)(M_state + k B); a batch fits when
// M(B) <= CapacityBytes: the GPU's usable memory less the runtime overhead outside the
// allocator (CUDA context, library workspaces, NCCL buffers).
//
// Progress with another configuration (RateFactor): a job's work is its trace duration at its
// user's configuration (requested GPUs, user's per-GPU batch). On `gpus` GPUs at per-GPU batch b
// it progresses at goodput(b, R) / goodput(b_user, R_user) of the runtime model's rate, both on
// the allocation's GPU type (sim/models/goodput.h: throughput x statistical efficiency; R =
// data-parallel replicas = GPUs / (TP x PP); tensor-parallel, pipeline and data-parallel rings
// within one NVLink/PCIe domain). So the job's useful work is constant when its batch changes,
// and a job given half its GPUs progresses at about half the rate. The runtime model's own rate
// keeps the GPU-type speedup and the placement's communication cost.
//
// GPU sharing (docs/models.md): a job on a share of a GPU is slowed by a co-location model.
// Shares are fixed partitions (like MPS thread limits): a job's speed depends on its share, not on
// who else is on the GPU. A job whose trace asks for a share (gpu_milli) ran its trace duration on
// that share: speed 1. A whole-GPU job packed onto a share s (in thousandths) runs at
// min(1, s / 500 x colocation_speed), colocation_speed being each job's speed when two share a
// GPU. Default 0.7, an assumption: two co-located training jobs together deliver 1.4x one job's
// throughput. Measurements vary widely with the models: Robroek et al. (EuroMLSys'24, "An
// Analysis of Collocation on GPUs for Deep Learning Training", MPS and MIG on an A100) report
// gains from none for models that saturate the GPU to several-fold for small ones; Gandiva
// (Xiao et al., OSDI'18) packs jobs only when the pair's throughput beats time-slicing. Vary it
// (`--colocation-speed`) in any study that depends on it.
//
// Checkpoints (docs/engine.md#checkpoints): with a storage bandwidth, a modelled job's checkpoint
// save and restore each take its model state bytes / bandwidth, and a preemption or resize both.
//
// OOM (docs/models.md#oom): a non-elastic policy starts a job at its current batch (the user's, or
// with batch_choice kGoodputOptimal the goodput-optimal one for its allocation); when that batch
// does not fit the job holds its GPUs for oom_startup_seconds, fails with an OOM, and is
// resubmitted with half the batch, at most oom_retries times (then it ends oom-failed).
#ifndef CLUSTERSIM_SIM_ENGINE_MODEL_RUNTIME_H_
#define CLUSTERSIM_SIM_ENGINE_MODEL_RUNTIME_H_

#include <memory>
#include <optional>
#include <vector>

#include "sim/engine/job.h"
#include "sim/hardware/hardware.h"
#include "sim/models/goodput.h"
#include "sim/models/memory_model.h"
#include "sim/models/model_catalog.h"

namespace clustersim {

struct ModelRuntimeOptions {
  // Seconds a job runs before an OOM kills it (framework start-up, data loading, first step).
  double oom_startup_seconds = 120;
  // Resubmissions with half the batch after OOM failures; the job ends oom-failed after that many.
  int oom_retries = 4;
  // Speed of each of two jobs sharing one GPU (see the header comment).
  double colocation_speed = 0.7;
  // Storage bandwidth for checkpoints, GB/s; 0 = checkpoint costs are the run's constants.
  double storage_gbps = 0;
  // The batch a non-elastic policy starts a job at: the user's (kUser, the default), or the
  // goodput-maximizing batch for the allocation's GPU type and count (kGoodputOptimal), for
  // studies that separate batch tuning from scheduling.
  enum class BatchChoice { kUser, kGoodputOptimal };
  BatchChoice batch_choice = BatchChoice::kUser;
  MemoryOptions memory;  // its `settings` are ignored (they come per job)
};

// Speed factor of `job` on a share of `milli` thousandths of a GPU (0 = a whole GPU: 1), with
// `colocation_speed` the speed of each of two jobs sharing a GPU (see the header comment).
double ShareSpeed(const Job& job, int milli, double colocation_speed);

class ModelRuntime {
 public:
  // Jobs whose model is not in `models` (or names none) have no model information: they hold
  // their GPUs' whole memory and never run out of it. The catalogs must outlive this object.
  ModelRuntime(const Trace& trace, const HardwareCatalog& hardware, const ModelCatalog& models,
               ModelRuntimeOptions options);

  const ModelRuntimeOptions& options() const { return options_; }
  // Jobs with model information.
  int64_t modelled_jobs() const { return modelled_; }

  // The job's model, or nullptr.
  const ModelSpec* model(JobId id) const;
  // Per-GPU batch the user asked for (the trace's, or the assigned one); 0 = none.
  int user_batch(JobId id) const { return jobs_[id].user_batch; }
  // The job's entry among the models of the run (its model with the job's settings: precision,
  // sequence length, parallelism); jobs of one entry, batch and GPU count have one RateFactor.
  // -1 = none.
  int model_entry(JobId id) const { return jobs_[id].model; }
  // The model-parallel layout on GPU type `type`, or nullptr when one sample fits on no layout of
  // up to 8 x 128 GPUs of that type. REQUIRES model(id).
  const ModelParallelism* layout(JobId id, int type) const;
  // Smallest GPU count on which the job can run on `type` (TP x PP), 0 if none.
  int min_gpus(JobId id, int type) const;
  // Per-GPU M(B), bytes, excluding the reserve. REQUIRES model(id) and layout(id, type).
  double MemoryBytes(JobId id, int type, int batch) const;
  // Bytes of a GPU of `type` jobs may fill: usable memory - runtime overhead
  // (AllocatableBytes of sim/models/memory_model.h).
  double CapacityBytes(int type) const;
  // Largest per-GPU batch that fits on `type` (0 if none).
  int MaxBatch(JobId id, int type) const;
  bool Fits(JobId id, int type, int batch) const;
  // Progress rate relative to the user's configuration on `gpus` GPUs of `type` at per-GPU batch
  // `batch` (see the header comment); 1 without model information. 0 when `gpus` is less than
  // min_gpus. REQUIRES gpus >= 1, batch >= 1.
  double RateFactor(JobId id, int type, int gpus, int batch) const;
  // True if RateFactor models the job's speed on another GPU count: it has a model of the
  // catalog and a user batch (otherwise RateFactor is 1 everywhere).
  bool ScalesWithGpus(JobId id) const;
  // The goodput-maximizing per-GPU batch in 1..MaxBatch on `gpus` GPUs of `type` (0 if none fits).
  int BestBatch(JobId id, int type, int gpus) const;
  // Speed factor of `job` on a share of `milli` thousandths (0 = a whole GPU: 1).
  double ShareSpeed(const Job& job, int milli) const;
  // Seconds to save (or restore) the job's checkpoint: model state bytes / storage bandwidth
  // (sim/models/memory_model.h CheckpointSeconds); 0 without a model or without storage_gbps.
  double CheckpointSeconds(JobId id) const;
  // Bytes of the job's checkpoint (sim/models/memory_model.h CheckpointBytes); 0 without a model.
  double CheckpointBytes(JobId id) const;

 private:
  struct PerType {
    std::optional<ModelParallelism> layout;
    std::unique_ptr<ThroughputModel> throughput;
    MemoryBreakdown memory;
  };
  struct ModelEntry {
    const ModelSpec* spec;
    JobSettings settings;
    std::vector<PerType> types;  // by catalog GPU type
  };
  struct JobEntry {
    int model = -1;  // index in models_
    int user_batch = 0;
    int gpus = 0;  // requested
  };
  double Goodput(const ModelEntry& m, int type, int gpus, int batch) const;

  const HardwareCatalog& hardware_;
  ModelRuntimeOptions options_;
  std::vector<ModelEntry> models_;
  std::vector<JobEntry> jobs_;
  std::vector<double> capacity_;  // CapacityBytes by GPU type
  int64_t modelled_ = 0;
};

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_ENGINE_MODEL_RUNTIME_H_
