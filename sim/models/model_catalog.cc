#include "sim/models/model_catalog.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "sim/models/models_json.h"  // generated from sim/data/models.json: kDefaultModelsJson
#include "sim/util/error.h"
#include "sim/util/json_file.h"

namespace clustersim {
namespace {

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// Share of a BERT sequence whose logits are computed in masked-language-model pre-training
// (Devlin et al. 2019 §3.1: 15% of the tokens are masked).
constexpr double kMaskedShare = 0.15;

ModelEfficiency ParseEfficiency(const nlohmann::json& e, const std::string& origin) {
  const std::string at = "efficiency";
  ModelEfficiency out;
  auto fraction = [&](const nlohmann::json& v, const std::string& where, double max) {
    const double x = RequireNumber(v, origin, where);
    if (!(x >= 0 && x <= max)) {
      throw JsonValueError(
          origin, where, "expected a number in [0, " + std::to_string(max) + "], got " + v.dump());
    }
    return x;
  };
  auto object = [&](const nlohmann::json& v, const std::string& where) -> const nlohmann::json& {
    if (!v.is_object()) throw JsonValueError(origin, where, "expected an object");
    return v;
  };
  for (const auto& [chip, classes] :
       object(RequireMember(e, "chips", origin, at), at + ".chips").items()) {
    for (const auto& [cls, groups] : object(classes, at + ".chips." + chip).items()) {
      for (const auto& [group, value] : object(groups, at + ".chips." + chip + "." + cls).items()) {
        const std::string where = at + ".chips." + chip + "." + cls + "." + group;
        if (group != "mixed" && group != "fp32" && group != "tf32") {
          throw JsonValueError(origin, where, "expected mixed, fp32 or tf32");
        }
        const double x = fraction(value, where, 1.0);
        if (x <= 0) throw JsonValueError(origin, where, "must be > 0");
        out.chips[chip][cls][group] = x;
      }
    }
  }
  for (const char* key : {"layer_overhead_seconds", "step_time_cv"}) {
    const std::string where = at + "." + key;
    for (const auto& [cls, value] : object(RequireMember(e, key, origin, at), where).items()) {
      const double x = fraction(value, where + "." + cls, 1.0);
      (std::string(key) == "step_time_cv" ? out.step_time_cv : out.layer_overhead_seconds)[cls] = x;
    }
  }
  if (e.contains("dp_overlap")) {
    throw JsonValueError(origin, at + ".dp_overlap",
                         "no longer read: the data-parallel all-reduce overlaps the backward pass "
                         "bucket by bucket (bucket_bytes; docs/models.md#goodput); remove it");
  }
  out.tp_overlap = fraction(RequireMember(e, "tp_overlap", origin, at), at + ".tp_overlap", 1);
  out.bucket_bytes =
      fraction(RequireMember(e, "bucket_bytes", origin, at), at + ".bucket_bytes", 1e12);
  if (!(out.bucket_bytes > 0)) {
    throw JsonValueError(origin, at + ".bucket_bytes",
                         "expected a bucket size in bytes > 0 (the default of stacks that state "
                         "none)");
  }
  out.activation_traffic =
      fraction(RequireMember(e, "activation_traffic", origin, at), at + ".activation_traffic", 100);
  out.attention_efficiency = fraction(RequireMember(e, "attention_efficiency", origin, at),
                                      at + ".attention_efficiency", 1);
  if (e.contains("gemm_intensity")) {
    if (!e["gemm_intensity"].is_boolean()) {
      throw JsonValueError(origin, at + ".gemm_intensity", "expected true or false");
    }
    out.gemm_intensity = e["gemm_intensity"].get<bool>();
  }
  if (out.attention_efficiency <= 0) {
    throw JsonValueError(origin, at + ".attention_efficiency", "must be > 0");
  }
  out.runtime_overhead_bytes = fraction(RequireMember(e, "runtime_overhead_gib", origin, at),
                                        at + ".runtime_overhead_gib", 64) *
                               1073741824.0;
  out.allocator_fragmentation = fraction(RequireMember(e, "allocator_fragmentation", origin, at),
                                         at + ".allocator_fragmentation", 1);
  for (const auto& [name, f] :
       object(RequireMember(e, "frameworks", origin, at), at + ".frameworks").items()) {
    const std::string where = at + ".frameworks." + name;
    object(f, where);
    Framework fw;
    for (const char* key : {"throughput", "finetune"}) {
      if (!f.contains(key)) continue;
      for (const auto& [k, v] : object(f[key], where + "." + key).items()) {
        const double x = fraction(v, where + "." + key + "." + k, 100);
        if (x <= 0) throw JsonValueError(origin, where + "." + key + "." + k, "must be > 0");
        (std::string(key) == "throughput" ? fw.throughput : fw.finetune)[k] = x;
      }
    }
    if (f.contains("activation_memory")) {
      for (const auto& [k, v] :
           object(f["activation_memory"], where + ".activation_memory").items()) {
        const std::string at_key = where + ".activation_memory." + k;
        if (!v.is_array() || v.size() != 2) {
          throw JsonValueError(origin, at_key, "expected [per-token factor, attention factor]");
        }
        Framework::ActivationFactors factors;
        factors.linear = fraction(v[0], at_key + "[0]", 100);
        factors.attention = fraction(v[1], at_key + "[1]", 100);
        if (factors.linear <= 0 || factors.attention <= 0) {
          throw JsonValueError(origin, at_key, "factors must be > 0");
        }
        fw.activation_memory[k] = factors;
      }
    }
    if (f.contains("layer_overhead_seconds")) {
      for (const auto& [k, v] :
           object(f["layer_overhead_seconds"], where + ".layer_overhead_seconds").items()) {
        const double x = fraction(v, where + ".layer_overhead_seconds." + k, 1);
        if (x < 0) {
          throw JsonValueError(origin, where + ".layer_overhead_seconds." + k, "must be >= 0");
        }
        fw.layer_overhead_seconds[k] = x;
      }
    }
    if (f.contains("softmax_bytes_mixed")) {
      fw.softmax_bytes_mixed =
          fraction(f["softmax_bytes_mixed"], where + ".softmax_bytes_mixed", 4);
    }
    if (f.contains("accumulation_buffer")) {
      if (!f["accumulation_buffer"].is_boolean()) {
        throw JsonValueError(origin, where + ".accumulation_buffer", "expected true or false");
      }
      fw.accumulation_buffer = f["accumulation_buffer"].get<bool>();
    }
    if (f.contains("fused_attention")) {
      if (!f["fused_attention"].is_boolean()) {
        throw JsonValueError(origin, where + ".fused_attention", "expected true or false");
      }
      fw.fused_attention = f["fused_attention"].get<bool>();
    }
    if (f.contains("gradient_bytes_mixed")) {
      fw.gradient_bytes_mixed =
          fraction(f["gradient_bytes_mixed"], where + ".gradient_bytes_mixed", 4);
      if (fw.gradient_bytes_mixed != 2 && fw.gradient_bytes_mixed != 4) {
        throw JsonValueError(origin, where + ".gradient_bytes_mixed", "expected 2 or 4");
      }
    }
    if (f.contains("bucket_bytes")) {
      fw.bucket_bytes = fraction(f["bucket_bytes"], where + ".bucket_bytes", 1e12);
    }
    if (f.contains("bucket_parameters")) {
      const auto& v = f["bucket_parameters"];
      const std::string at_key = where + ".bucket_parameters";
      if (!v.is_array() || v.size() != 2) {
        throw JsonValueError(origin, at_key,
                             "expected [minimum parameters, parameters per replica]");
      }
      fw.bucket_parameters = fraction(v[0], at_key + "[0]", 1e12);
      fw.bucket_parameters_per_replica = fraction(v[1], at_key + "[1]", 1e12);
      if (fw.bucket_parameters <= 0) throw JsonValueError(origin, at_key + "[0]", "must be > 0");
    }
    if (f.contains("source")) fw.source = RequireString(f["source"], origin, where + ".source");
    out.frameworks[name] = std::move(fw);
  }
  if (!out.frameworks.count("pytorch")) {
    throw JsonValueError(origin, at + ".frameworks", "the reference stack \"pytorch\" is missing");
  }
  if (e.contains("source")) out.source = RequireString(e["source"], origin, at + ".source");
  return out;
}

}  // namespace

const char* PrecisionName(Precision p) {
  switch (p) {
    case Precision::kFp32:
      return "fp32";
    case Precision::kTf32:
      return "tf32";
    case Precision::kMixedFp16:
      return "mixed-fp16";
    case Precision::kMixedBf16:
      return "mixed-bf16";
  }
  return "?";
}

std::optional<Precision> ParsePrecision(const std::string& text) {
  const std::string t = Lower(text);
  if (t == "fp32") return Precision::kFp32;
  if (t == "tf32") return Precision::kTf32;
  if (t == "mixed-fp16" || t == "fp16" || t == "amp") return Precision::kMixedFp16;
  if (t == "mixed-bf16" || t == "bf16") return Precision::kMixedBf16;
  return std::nullopt;
}

const char* PrecisionGroup(Precision p) {
  switch (p) {
    case Precision::kFp32:
      return "fp32";
    case Precision::kTf32:
      return "tf32";
    default:
      return "mixed";
  }
}

const char* OptimizerName(Optimizer o) {
  switch (o) {
    case Optimizer::kAdam:
      return "adam";
    case Optimizer::kSgdMomentum:
      return "sgd-momentum";
    case Optimizer::kSgd:
      return "sgd";
  }
  return "?";
}

const char* RecomputationName(Recomputation r) {
  switch (r) {
    case Recomputation::kNone:
      return "none";
    case Recomputation::kSelective:
      return "selective";
    case Recomputation::kFull:
      return "full";
  }
  return "?";
}

double ModelSpec::TypicalNoiseScale() const { return std::sqrt(noise_scale_min * noise_scale_max); }

std::string ModelSpec::EfficiencyClass() const {
  if (architecture == "decoder") return "decoder";
  if (architecture == "encoder" || architecture == "vit" || IsTransformer()) return "encoder";
  return "cnn";
}

std::optional<double> ModelEfficiency::Fraction(const std::string& chip,
                                                const std::string& model_class,
                                                const std::string& precision_group) const {
  const auto c = chips.find(chip);
  if (c == chips.end()) return std::nullopt;
  const auto k = c->second.find(model_class);
  if (k == c->second.end()) return std::nullopt;
  const auto g = k->second.find(precision_group);
  if (g == k->second.end()) return std::nullopt;
  return g->second;
}

double Framework::ThroughputFactor(const std::string& model_class, const std::string& chip,
                                   const std::string& precision_group, bool finetune_script) const {
  // The most specific key present: class:chip:group, class:chip, class.
  auto lookup = [&](const std::map<std::string, double>& table) {
    for (const std::string& key : {model_class + ":" + chip + ":" + precision_group,
                                   model_class + ":" + chip, model_class}) {
      if (auto it = table.find(key); it != table.end()) return it->second;
    }
    return 1.0;
  };
  double f = lookup(throughput);
  if (finetune_script) f *= lookup(finetune);
  return f;
}

const Framework& ModelEfficiency::FrameworkNamed(const std::string& name) const {
  const auto it = frameworks.find(name.empty() ? "pytorch" : name);
  if (it != frameworks.end()) return it->second;
  std::string names;
  for (const auto& [n, f] : frameworks) names += (names.empty() ? "" : ", ") + n;
  throw InputError("unknown framework \"" + name + "\"; valid: " + names);
}

Precision EffectivePrecision(const ModelSpec& model, const JobSettings& settings) {
  return settings.precision ? *settings.precision : model.precision;
}

int EffectiveSequence(const ModelSpec& model, const JobSettings& settings) {
  if (settings.sequence_length > 0) return settings.sequence_length;
  return model.IsTransformer() && model.sequence_length > 0 ? model.sequence_length
                                                            : model.image_size;
}

double TransformerActivationBytesPerSample(int layers, int hidden_size, int heads,
                                           int sequence_length, Recomputation recomputation) {
  const double s = sequence_length, h = hidden_size, a = heads, L = layers;
  const double one_layer = s * h * (34.0 + 5.0 * a * s / h);
  switch (recomputation) {
    case Recomputation::kNone:
      return L * one_layer;
    case Recomputation::kSelective:
      return 34.0 * L * s * h;
    case Recomputation::kFull:
      return 2.0 * L * s * h + one_layer;
  }
  return L * one_layer;
}

double ActivationBytesPerSample(const ModelSpec& model, const JobSettings& settings,
                                const Framework& framework) {
  const Precision precision = EffectivePrecision(model, settings);
  const bool mixed = IsMixed(precision);
  const auto factor_it =
      framework.activation_memory.find(model.EfficiencyClass() + ":" + PrecisionGroup(precision));
  const Framework::ActivationFactors factor = factor_it == framework.activation_memory.end()
                                                  ? Framework::ActivationFactors{}
                                                  : factor_it->second;
  if (!model.IsTransformer()) {
    const double side = EffectiveSequence(model, settings);
    const double scale =
        model.image_size > 0 ? (side / model.image_size) * (side / model.image_size) : 1.0;
    return model.activation_bytes_per_sample * scale * (mixed ? 1.0 : 2.0) * factor.linear;
  }
  const double s = EffectiveSequence(model, settings), h = model.hidden_size,
               a = model.attention_heads, L = model.layers;
  const double wide = mixed ? 2.0 : 4.0;  // bytes of a kept tensor element
  const double softmax = mixed ? framework.softmax_bytes_mixed : 4.0;
  // Korthikanti et al.'s 34 s h + 5 a s^2 bytes, by element: 16 s h + 2 a s^2 (softmax output)
  // + a s^2 (softmax dropout output) two-byte elements and 2 s h + a s^2 one-byte masks.
  const double linear = 16.0 * s * h * wide + 2.0 * s * h;
  const double attention = framework.fused_attention ? 0.0 : a * s * s * (softmax + wide + 1.0);
  double per_token = 0, per_score = 0;
  switch (model.recomputation) {
    case Recomputation::kNone:
      per_token = L * linear;
      per_score = L * attention;
      break;
    case Recomputation::kSelective:
      per_token = L * linear;
      break;
    case Recomputation::kFull:
      per_token = L * s * h * wide + linear;
      per_score = attention;
      break;
  }
  if (model.vocab_size > 0) {
    const double logits = s * model.vocab_size * (wide + 4.0);
    per_token += model.architecture == "decoder" ? logits : kMaskedShare * logits;
  }
  return per_token * factor.linear + per_score * factor.attention;
}

double FlopsPerSample(const ModelSpec& model, const JobSettings& settings) {
  const double s = EffectiveSequence(model, settings);
  if (!model.IsTransformer()) {
    const double scale =
        model.image_size > 0 ? (s / model.image_size) * (s / model.image_size) : 1.0;
    return model.flops_per_sample * scale;
  }
  return 6.0 * model.parameters * s + 12.0 * model.layers * s * s * model.hidden_size;
}

double AttentionFlopsPerSample(const ModelSpec& model, const JobSettings& settings) {
  if (!model.IsTransformer()) return 0;
  const double s = EffectiveSequence(model, settings);
  const double f = 12.0 * model.layers * s * s * model.hidden_size;
  switch (model.recomputation) {
    case Recomputation::kNone:
      return f;
    case Recomputation::kSelective:
      return f * 4.0 / 3.0;  // the forward products run twice
    case Recomputation::kFull:
      return f * 4.0 / 3.0;
  }
  return f;
}

double ExecutedFlopsPerSample(const ModelSpec& model, const JobSettings& settings) {
  const double f = FlopsPerSample(model, settings);
  if (!model.IsTransformer()) return f;
  const double s = EffectiveSequence(model, settings);
  switch (model.recomputation) {
    case Recomputation::kNone:
      return f;
    case Recomputation::kSelective:
      return f + 4.0 * model.layers * s * s * model.hidden_size;
    case Recomputation::kFull:
      return f * 4.0 / 3.0;
  }
  return f;
}

const ModelCatalog& ModelCatalog::Default() {
  static const ModelCatalog catalog = FromJsonText(kDefaultModelsJson, "<built-in models.json>");
  return catalog;
}

ModelCatalog ModelCatalog::FromFile(const std::string& path) {
  return FromJsonText(ReadFileText(path), path);
}

ModelCatalog ModelCatalog::FromJsonText(const std::string& text, const std::string& origin) try {
  const nlohmann::json doc = ParseJsonText(text, origin);
  const auto& models = RequireMember(doc, "models", origin, "catalog");
  if (!models.is_array() || models.empty()) {
    throw JsonValueError::Verbatim(origin, "models", "\"models\": expected a non-empty array");
  }
  ModelCatalog catalog;
  if (doc.contains("efficiency")) {
    catalog.efficiency_ = ParseEfficiency(doc["efficiency"], origin);
  } else {
    // A catalog without its own tables uses the built-in measured ones.
    catalog.efficiency_ = Default().efficiency_;
  }
  for (size_t i = 0; i < models.size(); ++i) {
    const auto& m = models[i];
    const std::string where = "models[" + std::to_string(i) + "]";
    auto number = [&](const nlohmann::json& obj, const char* key, const std::string& at) {
      return RequireNumber(RequireMember(obj, key, origin, at), origin, at + "." + key);
    };
    auto text_of = [&](const nlohmann::json& obj, const char* key, const std::string& at) {
      return RequireString(RequireMember(obj, key, origin, at), origin, at + "." + key);
    };
    auto optional_text = [&](const nlohmann::json& obj, const char* key, const std::string& at) {
      return obj.contains(key) ? text_of(obj, key, at) : std::string();
    };
    auto non_negative_int = [&](const char* key) {
      const double v = number(m, key, where);
      if (v < 0 || v != std::floor(v)) {
        throw JsonValueError(origin, where + "." + key, "expected an integer >= 0");
      }
      return static_cast<int>(v);
    };
    auto positive = [&](const char* key) {
      const double v = number(m, key, where);
      if (!(v > 0)) throw JsonValueError(origin, where + "." + key, "must be > 0");
      return v;
    };
    ModelSpec spec;
    spec.name = text_of(m, "name", where);
    spec.family = text_of(m, "family", where);
    if (spec.family != "cnn" && spec.family != "transformer" && spec.family != "other") {
      throw JsonValueError(origin, where + ".family",
                           "expected cnn, transformer or other, got \"" + spec.family + "\"");
    }
    spec.architecture = optional_text(m, "architecture", where);
    spec.parameters = positive("parameters");
    spec.layers = non_negative_int("layers");
    spec.hidden_size = non_negative_int("hidden_size");
    spec.attention_heads = non_negative_int("attention_heads");
    spec.sequence_length = non_negative_int("sequence_length");
    spec.image_size = non_negative_int("image_size");
    if (m.contains("vocab_size")) spec.vocab_size = non_negative_int("vocab_size");
    if (spec.IsTransformer() &&
        (spec.layers < 1 || spec.hidden_size < 1 || spec.sequence_length < 1)) {
      throw JsonValueError(origin, where,
                           "a transformer (attention_heads > 0) needs layers, hidden_size and "
                           "sequence_length >= 1");
    }
    const std::string precision = text_of(m, "precision", where);
    const auto parsed = ParsePrecision(precision);
    if (!parsed) {
      throw JsonValueError(
          origin, where + ".precision",
          "expected fp32, tf32, mixed-fp16 or mixed-bf16, got \"" + precision + "\"");
    }
    spec.precision = *parsed;
    const std::string optimizer = text_of(m, "optimizer", where);
    if (optimizer == "adam") {
      spec.optimizer = Optimizer::kAdam;
    } else if (optimizer == "sgd-momentum") {
      spec.optimizer = Optimizer::kSgdMomentum;
    } else if (optimizer == "sgd") {
      spec.optimizer = Optimizer::kSgd;
    } else {
      throw JsonValueError(origin, where + ".optimizer",
                           "expected adam, sgd-momentum or sgd, got \"" + optimizer + "\"");
    }
    const std::string recompute = m.contains("activation_recomputation")
                                      ? text_of(m, "activation_recomputation", where)
                                      : "none";
    if (recompute == "none") {
      spec.recomputation = Recomputation::kNone;
    } else if (recompute == "selective") {
      spec.recomputation = Recomputation::kSelective;
    } else if (recompute == "full") {
      spec.recomputation = Recomputation::kFull;
    } else {
      throw JsonValueError(origin, where + ".activation_recomputation",
                           "expected none, selective or full, got \"" + recompute + "\"");
    }
    spec.activation_bytes_per_sample = positive("activation_bytes_per_sample");
    spec.flops_per_sample = positive("flops_per_sample");
    const auto& noise = RequireMember(m, "gradient_noise_scale", origin, where);
    if (!noise.is_array() || noise.size() != 2) {
      throw JsonValueError(origin, where + ".gradient_noise_scale", "expected [min, max]");
    }
    spec.noise_scale_min = RequireNumber(noise[0], origin, where + ".gradient_noise_scale[0]");
    spec.noise_scale_max = RequireNumber(noise[1], origin, where + ".gradient_noise_scale[1]");
    if (!(spec.noise_scale_min > 0) || spec.noise_scale_max < spec.noise_scale_min) {
      throw JsonValueError(origin, where + ".gradient_noise_scale",
                           "expected 0 < min <= max samples");
    }
    spec.reference_batch = static_cast<int>(positive("reference_batch"));
    if (m.contains("efficiency")) spec.efficiency = positive("efficiency");
    if (m.contains("calibration")) {
      const std::string cal_where = where + ".calibration";
      const auto& cal = m["calibration"];
      ThroughputCalibration c;
      c.gpu = text_of(cal, "gpu", cal_where);
      if (cal.contains("batch")) {
        const double b = number(cal, "batch", cal_where);
        if (b < 1 || b != std::floor(b)) {
          throw JsonValueError(origin, cal_where + ".batch", "expected an integer >= 1");
        }
        c.batch = static_cast<int>(b);
      } else {
        c.batch = 1;
      }
      if (cal.contains("samples_per_second") == cal.contains("mfu")) {
        throw JsonValueError(origin, cal_where,
                             "expected exactly one of samples_per_second and mfu");
      }
      if (cal.contains("samples_per_second")) {
        c.samples_per_second = number(cal, "samples_per_second", cal_where);
        if (!(c.samples_per_second > 0)) {
          throw JsonValueError(origin, cal_where + ".samples_per_second", "must be > 0");
        }
      } else {
        c.mfu = number(cal, "mfu", cal_where);
        if (!(c.mfu > 0 && c.mfu <= 1)) {
          throw JsonValueError(origin, cal_where + ".mfu", "expected a fraction in (0, 1]");
        }
      }
      c.source = optional_text(cal, "source", cal_where);
      spec.calibration = std::move(c);
    }
    spec.activation_source = optional_text(m, "activation_source", where);
    spec.flops_source = optional_text(m, "flops_source", where);
    spec.noise_source = optional_text(m, "noise_source", where);
    spec.efficiency_source = optional_text(m, "efficiency_source", where);
    spec.source = optional_text(m, "source", where);
    for (const ModelSpec& other : catalog.models_) {
      if (Lower(other.name) == Lower(spec.name)) {
        throw JsonValueError(origin, where, "duplicate model \"" + spec.name + "\"");
      }
    }
    catalog.models_.push_back(std::move(spec));
  }
  return catalog;
} catch (const JsonValueError& e) {
  throw AtJsonPosition(e, origin, text);
}

const ModelSpec* ModelCatalog::Find(const std::string& name) const {
  for (const ModelSpec& m : models_) {
    if (m.name == name) return &m;
  }
  const std::string lower = Lower(name);
  for (const ModelSpec& m : models_) {
    if (Lower(m.name) == lower) return &m;
  }
  return nullptr;
}

const ModelSpec& ModelCatalog::Require(const std::string& name) const {
  if (const ModelSpec* m = Find(name)) return *m;
  throw InputError("unknown model \"" + name + "\"; valid models: " + NameList());
}

std::string ModelCatalog::NameList() const {
  std::string out;
  for (const ModelSpec& m : models_) out += (out.empty() ? "" : ", ") + m.name;
  return out;
}

std::string ModelFamilyOf(const std::string& model) {
  std::string m = model;
  std::transform(m.begin(), m.end(), m.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const char* key : {"resnet", "vgg", "inception", "cnn", "efficientnet", "mobilenet"}) {
    if (m.find(key) != std::string::npos) return "cnn";
  }
  for (const char* key : {"bert", "gpt", "llama", "transformer", "vit", "t5"}) {
    if (m.find(key) != std::string::npos) return "transformer";
  }
  return "other";
}

}  // namespace clustersim
