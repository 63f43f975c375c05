// The model catalog (docs/models.md#the-model-catalog): required models, formulas behind the
// derived figures, and errors for bad catalogs.
#include "sim/models/model_catalog.h"

#include <gtest/gtest.h>

#include "sim/engine/runtime_model.h"
#include "sim/util/error.h"

namespace clustersim {
namespace {

TEST(ModelCatalog, HoldsTheRequiredModelsWithSources) {
  const ModelCatalog& catalog = ModelCatalog::Default();
  for (const char* name : {"ResNet-50", "BERT-base", "BERT-large", "GPT-2-1.5B", "LLaMA-7B",
                           "LLaMA-13B", "ViT-L/16"}) {
    EXPECT_NE(catalog.Find(name), nullptr) << name;
  }
  for (const ModelSpec& m : catalog.models()) {
    EXPECT_FALSE(m.source.empty()) << m.name;
    EXPECT_FALSE(m.activation_source.empty()) << m.name;
    EXPECT_FALSE(m.flops_source.empty()) << m.name;
    EXPECT_FALSE(m.noise_source.empty()) << m.name;
    EXPECT_FALSE(m.efficiency_source.empty()) << m.name;
  }
  EXPECT_EQ(catalog.Find("bert-large"), catalog.Find("BERT-large"));  // case-insensitive
}

TEST(ModelCatalog, FamiliesAgreeWithTheRuntimeModel) {
  // The hardware runtime model picks a GPU speedup by the family it reads from a job's model name;
  // the catalog must say the same so both use one speedup.
  for (const ModelSpec& m : ModelCatalog::Default().models()) {
    EXPECT_EQ(m.family, ModelFamilyOf(m.name)) << m.name;
  }
}

TEST(ModelCatalog, TransformerActivationsFollowKorthikanti) {
  // BERT-large, no recomputation, s = 128, h = 1024, a = 16, L = 24:
  //   5 a s / h = 5 x 16 x 128 / 1024 = 10;  24 x 128 x 1024 x (34 + 10) = 138,412,032 B.
  EXPECT_DOUBLE_EQ(TransformerActivationBytesPerSample(24, 1024, 16, 128, Recomputation::kNone),
                   138412032.0);
  // LLaMA-7B, selective recomputation: 34 x 32 x 2048 x 4096 = 9,126,805,504 B; without it,
  // 5 a s / h = 5 x 32 x 2048 / 4096 = 80 and 32 x 2048 x 4096 x 114 = 30,601,641,984 B.
  EXPECT_DOUBLE_EQ(
      TransformerActivationBytesPerSample(32, 4096, 32, 2048, Recomputation::kSelective),
      9126805504.0);
  EXPECT_DOUBLE_EQ(TransformerActivationBytesPerSample(32, 4096, 32, 2048, Recomputation::kNone),
                   30601641984.0);
  // Full: 2 L s h + one layer: 2 x 32 x 2048 x 4096 + 2048 x 4096 x 114 = 536,870,912 +
  // 956,301,312 = 1,493,172,224 B.
  EXPECT_DOUBLE_EQ(TransformerActivationBytesPerSample(32, 4096, 32, 2048, Recomputation::kFull),
                   1493172224.0);
  // Every transformer's catalog figure is the formula of its own fields and recipe at its
  // default settings (reference stack): activations by element width, FLOPs 6 N s + 12 L s^2 h.
  // The other models' figures are checked against their architectures below
  // (CnnActivationsAreTheFeatureMapsOfTheArchitecture).
  const Framework& pytorch = ModelCatalog::Default().efficiency().FrameworkNamed("pytorch");
  int transformers = 0;
  for (const ModelSpec& m : ModelCatalog::Default().models()) {
    if (m.family != "transformer") continue;
    ++transformers;
    EXPECT_NEAR(m.activation_bytes_per_sample, ActivationBytesPerSample(m, {}, pytorch),
                1e-6 * m.activation_bytes_per_sample)
        << m.name;
    const double s = m.sequence_length;
    EXPECT_NEAR(m.flops_per_sample, 6 * m.parameters * s + 12.0 * m.layers * s * s * m.hidden_size,
                1e-9 * m.flops_per_sample)
        << m.name;
  }
  EXPECT_GE(transformers, 5);
}

TEST(ModelCatalog, CnnActivationsAreTheFeatureMapsOfTheArchitecture) {
  // Every model outside the transformer family is one whose figures are checked here.
  for (const ModelSpec& m : ModelCatalog::Default().models()) {
    if (m.family != "transformer") {
      EXPECT_EQ(m.name, "ResNet-50");
    }
  }
  // ResNet-50 v1.5 at 224 x 224 (He et al. 2016, Table 1): the output elements of every
  // convolution and the max-pool, per stage (blocks x side^2 x (c + c + 4c)) and the four
  // projection shortcuts (side^2 x 4c):
  const double conv1 = 112.0 * 112 * 64, pool = 56.0 * 56 * 64;
  const double stages = 3 * 56.0 * 56 * (64 + 64 + 256) + 4 * 28.0 * 28 * (128 + 128 + 512) +
                        6 * 14.0 * 14 * (256 + 256 + 1024) + 3 * 7.0 * 7 * (512 + 512 + 2048);
  const double shortcuts = 56.0 * 56 * 256 + 28.0 * 28 * 512 + 14.0 * 14 * 1024 + 7.0 * 7 * 2048;
  const double elements = conv1 + pool + stages + shortcuts;
  EXPECT_DOUBLE_EQ(elements, 10787840.0);
  // Two FP16 tensors kept per output (for batch-norm's backward pass and its output; ReLU in
  // place), plus the FP16 input image.
  const ModelSpec& resnet = ModelCatalog::Default().Require("ResNet-50");
  EXPECT_DOUBLE_EQ(resnet.activation_bytes_per_sample, 2 * 2 * elements + 224.0 * 224 * 3 * 2);
  // 4.1 GMACs forward (NVIDIA's v1.5 figure) x 2 FLOPs x 3 (forward + backward).
  EXPECT_DOUBLE_EQ(resnet.flops_per_sample, 4.1e9 * 2 * 3);
  // Feature maps scale with the image area and double in FP32.
  const Framework& pytorch = ModelCatalog::Default().efficiency().FrameworkNamed("pytorch");
  JobSettings small;
  small.sequence_length = 112;
  EXPECT_DOUBLE_EQ(ActivationBytesPerSample(resnet, small, pytorch),
                   resnet.activation_bytes_per_sample / 4);
  JobSettings fp32;
  fp32.precision = Precision::kFp32;
  EXPECT_DOUBLE_EQ(ActivationBytesPerSample(resnet, fp32, pytorch),
                   2 * resnet.activation_bytes_per_sample);
}

TEST(ModelCatalog, ActivationsSplitKorthikantisCountByElementWidth) {
  // BERT-large, sequence 128, mixed precision: Korthikanti's 34 s h + 5 a s^2 with the softmax
  // output at 2 bytes; the reference stack keeps it in FP32 (+2 a s^2 bytes per layer):
  //   24 x (34 x 131,072 + 7 x 16 x 16,384) = 24 x (4,456,448 + 1,835,008) = 150,994,944 B,
  // plus the logits of 15% of the positions: 0.15 x 128 x 30,522 x 6 = 3,516,134.4 B.
  const ModelSpec& bert = ModelCatalog::Default().Require("BERT-large");
  const ModelEfficiency& e = ModelCatalog::Default().efficiency();
  EXPECT_NEAR(ActivationBytesPerSample(bert, {}, e.FrameworkNamed("pytorch")),
              150994944.0 + 3516134.4, 1e-3);
  // A stack with a half-precision softmax keeps Korthikanti's 5 a s^2 exactly.
  EXPECT_NEAR(
      ActivationBytesPerSample(bert, {}, e.FrameworkNamed("megatron")),
      TransformerActivationBytesPerSample(24, 1024, 16, 128, Recomputation::kNone) + 3516134.4,
      1e-3);
  // With fused attention (no stored scores) only the 34 s h terms remain.
  EXPECT_NEAR(ActivationBytesPerSample(bert, {}, e.FrameworkNamed("megatron-core")),
              24 * 34.0 * 128 * 1024 + 3516134.4, 1e-3);
}

TEST(ModelCatalog, UnknownModelListsTheValidNames) {
  try {
    ModelCatalog::Default().Require("GPT-5");
    FAIL();
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("GPT-5"), std::string::npos);
    EXPECT_NE(what.find("ResNet-50"), std::string::npos);
    EXPECT_NE(what.find("LLaMA-13B"), std::string::npos);
  }
}

std::string OneModel(const std::string& overrides) {
  return R"({"models":[{"name":"m","family":"transformer","parameters":1e6,"layers":2,
    "hidden_size":64,"attention_heads":2,"sequence_length":16,"image_size":0,
    "precision":"mixed-fp16","optimizer":"adam","activation_bytes_per_sample":1000,
    "flops_per_sample":1e8,"gradient_noise_scale":[10,100],"reference_batch":32,
    "calibration":{"gpu":"V100-16GB","mfu":0.3})" +
         overrides + "}]}";
}

TEST(ModelCatalog, BadCatalogsAreRejectedNamingTheEntry) {
  EXPECT_NO_THROW(ModelCatalog::FromJsonText(OneModel(""), "ok.json"));
  auto error_of = [](const std::string& text) {
    try {
      ModelCatalog::FromJsonText(text, "bad.json");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error_of(OneModel(R"(,"family":"rnn")")).find("family"), std::string::npos);
  EXPECT_NE(error_of(OneModel(R"(,"precision":"fp8")")).find("precision"), std::string::npos);
  EXPECT_NE(error_of(OneModel(R"(,"calibration":{"gpu":"V100-16GB"})")).find("exactly one"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"models":[{"name":"m","family":"cnn","parameters":1,"layers":1,
    "hidden_size":1,"attention_heads":0,"sequence_length":0,"image_size":1,"precision":"fp32",
    "optimizer":"sgd","activation_bytes_per_sample":1,"flops_per_sample":1,
    "gradient_noise_scale":[1,1],"reference_batch":1}],"efficiency":{"chips":{}}})")
                .find("efficiency"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"models":[{"name":"m"}]})").find("models[0]"), std::string::npos);
  EXPECT_NE(error_of(R"({"models":[]})").find("non-empty"), std::string::npos);
  EXPECT_NE(error_of(R"({"models":[ )").find("bad.json"), std::string::npos);
}

}  // namespace
}  // namespace clustersim
