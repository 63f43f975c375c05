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

}  // namespace

const char* PrecisionName(Precision p) {
  switch (p) {
    case Precision::kFp32:
      return "fp32";
    case Precision::kMixedFp16:
      return "mixed-fp16";
    case Precision::kMixedBf16:
      return "mixed-bf16";
  }
  return "?";
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
    const std::string precision = text_of(m, "precision", where);
    if (precision == "fp32") {
      spec.precision = Precision::kFp32;
    } else if (precision == "mixed-fp16") {
      spec.precision = Precision::kMixedFp16;
    } else if (precision == "mixed-bf16") {
      spec.precision = Precision::kMixedBf16;
    } else {
      throw JsonValueError(origin, where + ".precision",
                           "expected fp32, mixed-fp16 or "
                           "mixed-bf16, got \"" +
                               precision + "\"");
    }
    const std::string optimizer = text_of(m, "optimizer", where);
    if (optimizer == "adam") {
      spec.optimizer = Optimizer::kAdam;
    } else if (optimizer == "sgd-momentum") {
      spec.optimizer = Optimizer::kSgdMomentum;
    } else if (optimizer == "sgd") {
      spec.optimizer = Optimizer::kSgd;
    } else {
      throw JsonValueError(origin, where + ".optimizer",
                           "expected adam, sgd-momentum or sgd, "
                           "got \"" +
                               optimizer + "\"");
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
                           "expected none, "
                           "selective or full, got \"" +
                               recompute + "\"");
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
    spec.batch_half = number(m, "batch_half", where);
    if (spec.batch_half < 0) throw JsonValueError(origin, where + ".batch_half", "must be >= 0");
    const std::string cal_where = where + ".calibration";
    const auto& cal = RequireMember(m, "calibration", origin, where);
    spec.calibration.gpu = text_of(cal, "gpu", cal_where);
    if (cal.contains("batch")) {
      const double b = number(cal, "batch", cal_where);
      if (b < 0 || b != std::floor(b)) {
        throw JsonValueError(origin, cal_where + ".batch", "expected an integer >= 0");
      }
      spec.calibration.batch = static_cast<int>(b);
    }
    if (cal.contains("samples_per_second") == cal.contains("mfu")) {
      throw JsonValueError(origin, cal_where,
                           "expected exactly one of samples_per_second "
                           "and mfu");
    }
    if (cal.contains("samples_per_second")) {
      spec.calibration.samples_per_second = number(cal, "samples_per_second", cal_where);
      if (!(spec.calibration.samples_per_second > 0)) {
        throw JsonValueError(origin, cal_where + ".samples_per_second", "must be > 0");
      }
    } else {
      spec.calibration.mfu = number(cal, "mfu", cal_where);
      if (!(spec.calibration.mfu > 0 && spec.calibration.mfu <= 1)) {
        throw JsonValueError(origin, cal_where + ".mfu", "expected a fraction in (0, 1]");
      }
    }
    spec.calibration.source = optional_text(cal, "source", cal_where);
    spec.activation_source = optional_text(m, "activation_source", where);
    spec.flops_source = optional_text(m, "flops_source", where);
    spec.noise_source = optional_text(m, "noise_source", where);
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
