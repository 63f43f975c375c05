// The model catalog (docs/models.md): one ModelSpec per deep-learning model — its shape, its
// training recipe (precision, optimizer, activation recomputation) and the figures the memory and
// throughput models need (activation bytes and FLOPs per sample, gradient noise scale) — plus the
// measured efficiency tables those models share (ModelEfficiency: the achieved fraction of a GPU's
// peak per chip, model class and precision, per-layer overheads, data-parallel variability, and
// the software stacks of published measurements). The default catalog (sim/data/models.json) is
// compiled into the binary; a JSON file of the same form replaces it (`--models FILE`). Every
// figure carries its source in the JSON; docs/model-validation.md says how the efficiency tables
// were fitted. The catalog is immutable after loading.
//
// A "sample" is one image (CNN, ViT) or one sequence of `sequence_length` tokens (language
// models). Bytes are bytes (not GiB), FLOPs count a multiply-add as 2.
//
// Per-job settings (JobSettings) change a model's precision and sequence length; FlopsPerSample
// and ActivationBytesPerSample give the figures at those settings. A catalog entry's own
// activation_bytes_per_sample and flops_per_sample are the values at its default settings (a test
// checks them against the formulas).
#ifndef CLUSTERSIM_SIM_MODELS_MODEL_CATALOG_H_
#define CLUSTERSIM_SIM_MODELS_MODEL_CATALOG_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace clustersim {

// kFp32: FP32 storage and FP32 arithmetic. kTf32: FP32 storage, matrix products on TF32 tensor
// cores where the GPU has them (A100, H100; on a GPU without TF32 it is kFp32). kMixedFp16 and
// kMixedBf16: 16-bit activations and matrix products, FP32 master weights and optimizer state.
enum class Precision { kFp32, kTf32, kMixedFp16, kMixedBf16 };
enum class Optimizer { kAdam, kSgdMomentum, kSgd };
enum class Recomputation { kNone, kSelective, kFull };

const char* PrecisionName(Precision p);
const char* OptimizerName(Optimizer o);
const char* RecomputationName(Recomputation r);
// Parses "fp32", "tf32", "mixed-fp16" (also "fp16", "amp"), "mixed-bf16" (also "bf16"); nullopt
// otherwise.
std::optional<Precision> ParsePrecision(const std::string& text);
inline bool IsMixed(Precision p) {
  return p == Precision::kMixedFp16 || p == Precision::kMixedBf16;
}

// A published throughput a model's efficiency is fitted to (optional): on `gpu` at per-GPU
// `batch`, one GPU, the model's default settings.
struct ThroughputCalibration {
  std::string gpu;
  int batch = 0;
  double samples_per_second = 0;  // one GPU; 0 when `mfu` is given instead
  double mfu = 0;                 // model FLOPs / peak dense 16-bit FLOPs, in (0, 1]
  std::string source;
};

struct ModelSpec {
  std::string name;          // e.g. "BERT-large"
  std::string family;        // "cnn" | "transformer" | "other": the GPU catalog's speedup keys
  std::string architecture;  // "cnn", "encoder", "decoder", "vit"
  double parameters = 0;     // count, embeddings included
  int layers = 0;
  int hidden_size = 0;
  int attention_heads = 0;  // 0 for CNNs
  int sequence_length = 0;  // default tokens per sample; 0 for CNNs
  int image_size = 0;       // default pixels per side; 0 for language models
  int vocab_size = 0;       // language models: output vocabulary (logits memory); 0 = none
  Precision precision = Precision::kMixedFp16;
  Optimizer optimizer = Optimizer::kAdam;
  Recomputation recomputation = Recomputation::kNone;
  double activation_bytes_per_sample = 0;  // at the default settings, no model parallelism
  double flops_per_sample = 0;             // model FLOPs, forward + backward, default settings
  double noise_scale_min = 0;              // gradient noise scale range, samples
  double noise_scale_max = 0;
  int reference_batch = 0;  // global batch the hyperparameters were tuned at (Pollux's M0)
  // Multiplier on the class's achieved fraction of peak (ModelEfficiency::chips) for this model;
  // 1 = as the class. Derived from `calibration` when that is given.
  double efficiency = 1.0;
  std::optional<ThroughputCalibration> calibration;
  std::string activation_source, flops_source, noise_source, efficiency_source, source;

  // Returns the geometric mean of the noise scale range: the default noise scale, samples.
  double TypicalNoiseScale() const;
  bool IsTransformer() const { return attention_heads > 0; }
  // "cnn", "encoder" or "decoder": the key of the efficiency tables (ViTs are encoders).
  std::string EfficiencyClass() const;
};

// Per-job settings of a model; 0 / nullopt = the model's default.
struct JobSettings {
  std::optional<Precision> precision;
  int sequence_length = 0;  // tokens (language models) or pixels per side (CNNs, ViTs)
};

// A software stack of published measurements (validation rows name one); the simulator's jobs
// run the reference stack "pytorch".
struct Framework {
  // Multiplier on the achieved fraction of peak per efficiency class ("cnn", "encoder",
  // "decoder"), per class and chip ("encoder:ampere") or per class, chip and precision group
  // ("encoder:ampere:mixed"); the most specific key present wins; missing = 1. The precision
  // level holds a stack's own mixed-precision implementation (TensorFlow 1's automatic graph
  // rewrite, Lambda's scripts) whose speed-up over FP32 / TF32 differs from the reference's.
  std::map<std::string, double> throughput;
  // Further multiplier for the stack's fine-tuning scripts, keyed like `throughput`: their
  // published figures are end-to-end epochs (data loading, evaluation) rather than steady-state
  // steps; missing = 1.
  std::map<std::string, double> finetune;
  // Per-layer time that does not shrink on a faster GPU (tau of sim/models/goodput.h: kernel
  // launches, the stack's own per-operation dispatch), per class; missing = the catalog's
  // ModelEfficiency::layer_overhead_seconds. A graph executor that dispatches many small
  // operations per layer (TensorFlow 1) loses more per micro-batch than the reference, which
  // makes its small micro-batches less efficient.
  std::map<std::string, double> layer_overhead_seconds;
  // Returns the throughput multiplier for `model_class` on `chip` at `precision_group` ("mixed",
  // "tf32", "fp32"), for fine-tuning or not.
  double ThroughputFactor(const std::string& model_class, const std::string& chip,
                          const std::string& precision_group, bool finetune) const;
  // Multipliers on activation memory per "class:precision group" (e.g. "encoder:fp32"): on the
  // per-token terms (s h, logits; all of a CNN's activations) and on the attention-score terms
  // (a s^2); missing = {1, 1}.
  struct ActivationFactors {
    double linear = 1;
    double attention = 1;
  };
  std::map<std::string, ActivationFactors> activation_memory;
  // Bytes per element of the kept attention probabilities under mixed precision: 4 when softmax
  // runs in FP32 (PyTorch autocast), 2 when a fused half-precision kernel is used.
  double softmax_bytes_mixed = 4;
  // True if gradient accumulation keeps a separate FP32 buffer (4 B/parameter) when accumulating.
  bool accumulation_buffer = false;
  // True if attention runs as one fused kernel that keeps no a s^2 score tensors
  // (FlashAttention, Dao et al. 2022; Megatron-Core's Transformer Engine attention).
  bool fused_attention = false;
  // Bytes per gradient element under mixed precision: 4 when gradients are kept in FP32 (PyTorch
  // automatic mixed precision, Megatron-LM's main-gradient buffer), 2 for 16-bit model gradients
  // beside an FP32 master copy (NVIDIA apex amp O2).
  double gradient_bytes_mixed = 4;
  // The data-parallel gradient buckets (sim/models/goodput.h, "exposed all-reduce"): a fixed
  // size in bytes, or, when `bucket_parameters` > 0, max(bucket_parameters,
  // bucket_parameters_per_replica x data-parallel replicas) parameters of gradients;
  // bucket_bytes 0 = the catalog's ModelEfficiency::bucket_bytes. Horovod (the TensorFlow stacks)
  // fuses up to 64 MB per all-reduce (HOROVOD_FUSION_THRESHOLD, horovod docs/tensor-fusion.rst;
  // 128 MB from v0.21); Megatron-Core uses max(4e7, 1e6 x DP) parameters
  // (megatron/core/distributed/distributed_data_parallel_config.py, bucket_size).
  double bucket_bytes = 0;
  double bucket_parameters = 0;
  double bucket_parameters_per_replica = 0;
  std::string source;
};

// The measured efficiency tables (docs/model-validation.md; fitted by
// `clustersim validate-models --fit`).
struct ModelEfficiency {
  // chip -> class -> precision group ("mixed", "fp32", "tf32") -> achieved fraction of the peak
  // of that precision at saturation, single GPU, reference stack.
  std::map<std::string, std::map<std::string, std::map<std::string, double>>> chips;
  // Fixed time per layer and micro-batch that does not shrink on a faster GPU (kernel launches,
  // small kernels), seconds, per class.
  std::map<std::string, double> layer_overhead_seconds;
  // Coefficient of variation of one GPU's step time, per class: n synchronized GPUs wait for the
  // slowest, E[max] ~ mean x (1 + cv x sqrt(2 ln n)).
  std::map<std::string, double> step_time_cv;
  // Efficiency of the attention-score products (12 L s^2 h FLOPs per sample: Q K^T and the
  // weighted sum of values, forward and backward) relative to the class's fraction u: batched
  // small-head products and fused attention kernels run below large GEMMs (FlashAttention-2, Dao
  // 2023, reports 50-73% of the A100's peak for forward + backward attention, where large GEMMs
  // reach 80-90%): 0.6.
  double attention_efficiency = 0.6;
  // Whether a transformer's weight GEMMs run at the fraction their arithmetic intensity allows
  // (ThroughputModel::GemmEfficiency, a smoothed roofline); JSON "gemm_intensity", default false.
  bool gemm_intensity = false;
  // Bytes of memory traffic per byte of kept activations: the memory-bound element-wise work of
  // a step (normalization, activation functions, softmax, dropout, residuals) writes every kept
  // tensor in the forward pass and reads it in the backward pass, and the backward pass writes
  // and reads a gradient of each: 4.
  double activation_traffic = 4.0;
  // Share of the tensor-parallel communication hidden with communication overlap.
  double tp_overlap = 0.5;
  // Gradient bucket of the data-parallel all-reduce, bytes, for stacks without their own
  // (Framework::bucket_bytes): PyTorch DistributedDataParallel's default bucket_cap_mb, 25 MB
  // (torch.nn.parallel.DistributedDataParallel documentation; Li et al., "PyTorch Distributed:
  // Experiences on Accelerating Data Parallel Training", VLDB 2020, §3.2.3 and §5, give the
  // design and the measured effect of the bucket size). The overlap itself is not a parameter: buckets are all-reduced one after
  // another as the backward pass makes them ready (ThroughputModel::Estimate).
  double bucket_bytes = 25e6;
  // Memory outside the model's tensors: CUDA context, library handles and workspaces, NCCL
  // buffers (bytes), and the allocator's cached-but-unallocated share of the tensors.
  double runtime_overhead_bytes = 1.27 * 1073741824.0;
  double allocator_fragmentation = 0.01;
  std::map<std::string, Framework> frameworks;
  std::string source;

  // Returns the achieved fraction for (chip, class, precision group) or nullopt.
  std::optional<double> Fraction(const std::string& chip, const std::string& model_class,
                                 const std::string& precision_group) const;
  // Returns the named stack, or the reference one ("pytorch") for an empty name; throws
  // InputError for an unknown name.
  const Framework& FrameworkNamed(const std::string& name) const;
};

class ModelCatalog {
 public:
  // The catalog compiled into the binary.
  static const ModelCatalog& Default();
  // Throws InputError naming the file and the offending entry.
  static ModelCatalog FromFile(const std::string& path);
  static ModelCatalog FromJsonText(const std::string& text, const std::string& origin);

  const std::vector<ModelSpec>& models() const { return models_; }
  const ModelEfficiency& efficiency() const { return efficiency_; }
  // Returns the model named `name` (exact, then case-insensitive), or nullptr.
  const ModelSpec* Find(const std::string& name) const;
  // Returns the model or throws InputError listing the valid names.
  const ModelSpec& Require(const std::string& name) const;
  std::string NameList() const;

 private:
  std::vector<ModelSpec> models_;
  ModelEfficiency efficiency_;
};

// Returns "cnn", "transformer" or "other" from a model name (case-insensitive substrings:
// resnet/vgg/inception/cnn/efficientnet/mobilenet -> cnn; bert/gpt/llama/transformer/vit/t5 ->
// transformer). A catalog entry's `family` must agree with it.
std::string ModelFamilyOf(const std::string& model);

// "mixed", "tf32" or "fp32": the precision group of the efficiency tables.
const char* PrecisionGroup(Precision p);

// The model's precision and sequence length (or image size) under `settings`.
Precision EffectivePrecision(const ModelSpec& model, const JobSettings& settings);
int EffectiveSequence(const ModelSpec& model, const JobSettings& settings);

// Korthikanti et al. 2022 (arXiv:2205.05198 §4.1), 16-bit activations, no model parallelism:
// activation bytes per sample of a transformer of `layers` layers, hidden size h, a heads and
// sequence length s. kNone: L s h (34 + 5 a s / h); kSelective: 34 L s h; kFull: 2 L s h (the
// layer inputs) + s h (34 + 5 a s / h) (one layer rebuilt at a time during the backward pass).
double TransformerActivationBytesPerSample(int layers, int hidden_size, int heads,
                                           int sequence_length, Recomputation recomputation);

// Activation bytes per sample at `settings` under `framework`, no model parallelism. Transformers:
// the per-layer count of Korthikanti et al. split by element width — 2-byte tensors 32 s h +
// 4 a s^2 (the softmax output 2 a s^2 of them) and 1-byte dropout masks 2 s h + a s^2 — at 2 bytes
// per element under mixed precision (the softmax output at framework.softmax_bytes_mixed) and 4
// bytes under FP32/TF32; selective recomputation drops the a s^2 terms, full recomputation keeps
// the layer inputs (2 or 4 bytes x s h per layer) plus one layer. Plus the output logits: s x
// vocab x (2 + 4) bytes for decoders (16-bit logits and the FP32 loss input) and 15% of that for
// encoders (masked-language-model positions only; Devlin et al. 2019). CNNs: the catalog figure
// (mixed precision) x (image / default image)^2, x 2 in FP32. The framework's factors for the
// model's class and precision group scale the per-token and the attention-score parts.
double ActivationBytesPerSample(const ModelSpec& model, const JobSettings& settings,
                                const Framework& framework);

// Model FLOPs per sample at `settings`, forward + backward, no recomputation: transformers
// 6 N s + 12 L s^2 h (the weight products of Kaplan et al. 2020 plus attention scores and
// context, Narayanan et al. 2021 eq. 3 without recomputation); CNNs the catalog figure x
// (image / default image)^2.
double FlopsPerSample(const ModelSpec& model, const JobSettings& settings);
// FLOPs the GPU executes per sample including recomputation: full recomputation adds one forward
// pass (x 4/3 of the layer FLOPs); selective recomputation adds the attention-score forward
// products 4 L s^2 h.
double ExecutedFlopsPerSample(const ModelSpec& model, const JobSettings& settings);
// The attention-score part of ExecutedFlopsPerSample: 12 L s^2 h, x 4/3 with recomputation
// (selective recomputation recomputes exactly these forward products).
double AttentionFlopsPerSample(const ModelSpec& model, const JobSettings& settings);

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_MODELS_MODEL_CATALOG_H_
