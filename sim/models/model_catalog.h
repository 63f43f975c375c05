// The model catalog (docs/models.md): one ModelSpec per deep-learning model — its shape, its
// training recipe (precision, optimizer, activation recomputation) and the figures the memory and
// throughput models need (activation bytes and FLOPs per sample, gradient noise scale, a published
// throughput calibration). The default catalog (sim/data/models.json) is compiled into the
// binary; a JSON file of the same form replaces it (`--models FILE`). Every figure carries its
// source in the JSON. The catalog is immutable after loading.
//
// A "sample" is one image (CNN, ViT) or one sequence of `sequence_length` tokens (language
// models). Bytes are bytes (not GiB), FLOPs count a multiply-add as 2.
#ifndef CLUSTERSIM_SIM_MODELS_MODEL_CATALOG_H_
#define CLUSTERSIM_SIM_MODELS_MODEL_CATALOG_H_

#include <optional>
#include <string>
#include <vector>

namespace clustersim {

enum class Precision { kFp32, kMixedFp16, kMixedBf16 };
enum class Optimizer { kAdam, kSgdMomentum, kSgd };
enum class Recomputation { kNone, kSelective, kFull };

const char* PrecisionName(Precision p);
const char* OptimizerName(Optimizer o);
const char* RecomputationName(Recomputation r);

// Where a model's saturated training rate comes from: a published throughput (or model-FLOPs
// utilization) on one GPU type at one per-GPU batch.
struct ThroughputCalibration {
  std::string gpu;                // a GPU type of the hardware catalog
  int batch = 0;                  // per-GPU batch of the measurement; 0 = already saturated
  double samples_per_second = 0;  // one GPU; 0 when `mfu` is given instead
  double mfu = 0;                 // model FLOPs / peak dense FP16/BF16 FLOPs, in (0, 1]
  std::string source;
};

struct ModelSpec {
  std::string name;          // e.g. "BERT-large"
  std::string family;        // "cnn" | "transformer" | "other": the GPU catalog's speedup keys
  std::string architecture;  // "cnn", "encoder", "decoder", "vit"
  double parameters = 0;     // count
  int layers = 0;
  int hidden_size = 0;
  int attention_heads = 0;  // 0 for CNNs
  int sequence_length = 0;  // tokens per sample; 0 for CNNs
  int image_size = 0;       // pixels per side; 0 for language models
  Precision precision = Precision::kMixedFp16;
  Optimizer optimizer = Optimizer::kAdam;
  Recomputation recomputation = Recomputation::kNone;
  double activation_bytes_per_sample = 0;  // k of M(B) = M_static + k B, no model parallelism
  double flops_per_sample = 0;             // model FLOPs, forward + backward, no recomputation
  double noise_scale_min = 0;              // gradient noise scale range, samples
  double noise_scale_max = 0;
  int reference_batch = 0;  // global batch the hyperparameters were tuned at (Pollux's M0)
  double batch_half = 0;    // per-GPU batch at which a step runs at half the saturated rate
  ThroughputCalibration calibration;
  std::string activation_source, flops_source, noise_source, source;

  // Returns the geometric mean of the noise scale range: the default noise scale, samples.
  double TypicalNoiseScale() const;
};

class ModelCatalog {
 public:
  // The catalog compiled into the binary.
  static const ModelCatalog& Default();
  // Throws InputError naming the file and the offending entry.
  static ModelCatalog FromFile(const std::string& path);
  static ModelCatalog FromJsonText(const std::string& text, const std::string& origin);

  const std::vector<ModelSpec>& models() const { return models_; }
  // Returns the model named `name` (exact, then case-insensitive), or nullptr.
  const ModelSpec* Find(const std::string& name) const;
  // Returns the model or throws InputError listing the valid names.
  const ModelSpec& Require(const std::string& name) const;
  std::string NameList() const;

 private:
  std::vector<ModelSpec> models_;
};

// Korthikanti et al. 2022 (arXiv:2205.05198 §4.1), 16-bit activations, no model parallelism:
// activation bytes per sample of a transformer of `layers` layers, hidden size h, a heads and
// sequence length s. kNone: L s h (34 + 5 a s / h); kSelective: 34 L s h; kFull: 2 L s h (the
// layer inputs) + s h (34 + 5 a s / h) (one layer rebuilt at a time during the backward pass).
// Returns "cnn", "transformer" or "other" from a model name (case-insensitive substrings:
// resnet/vgg/inception/cnn/efficientnet/mobilenet -> cnn; bert/gpt/llama/transformer/vit/t5 ->
// transformer). A catalog entry's `family` must agree with it.
std::string ModelFamilyOf(const std::string& model);

double TransformerActivationBytesPerSample(int layers, int hidden_size, int heads,
                                           int sequence_length, Recomputation recomputation);

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_MODELS_MODEL_CATALOG_H_
