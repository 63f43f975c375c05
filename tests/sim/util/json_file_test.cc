// sim/util/json_file.h: where a value is (FindJsonValue), and schema errors of the JSON documents
// (cluster spec, GPU and model catalogs) reported at the line and column of the offending value.
// Positions are counted by hand in the literal texts below (1-based, bytes).
#include "sim/util/json_file.h"

#include <gtest/gtest.h>

#include "sim/hardware/cluster.h"
#include "sim/hardware/hardware.h"
#include "sim/models/model_catalog.h"
#include "sim/util/error.h"

namespace clustersim {
namespace {

using Position = std::pair<int, int>;

TEST(FindJsonValue, FindsMembersAndArrayElements) {
  const std::string text =
      "{\n"                                           // line 1
      "  \"nodes\": [\n"                              // line 2
      "    {\"count\": 2, \"gpu_type\": \"X\"},\n"    // line 3
      "    {\"count\": -1,\n"                         // line 4
      "     \"gpu_type\":\"Y\"}\n"                    // line 5
      "  ],\n"                                        // line 6
      "  \"network\": {\"nodes_per_rack\": 1.5e1}\n"  // line 7
      "}\n";
  EXPECT_EQ(FindJsonValue(text, "nodes"), Position(2, 12));
  EXPECT_EQ(FindJsonValue(text, "nodes[0]"), Position(3, 5));
  EXPECT_EQ(FindJsonValue(text, "nodes[0].count"), Position(3, 15));
  EXPECT_EQ(FindJsonValue(text, "nodes[0].gpu_type"), Position(3, 30));
  EXPECT_EQ(FindJsonValue(text, "nodes[1].count"), Position(4, 15));
  EXPECT_EQ(FindJsonValue(text, "nodes[1].gpu_type"), Position(5, 17));
  EXPECT_EQ(FindJsonValue(text, "network.nodes_per_rack"), Position(7, 33));
  // Not there, or not a path.
  EXPECT_EQ(FindJsonValue(text, "nodes[2]"), Position(0, 0));
  EXPECT_EQ(FindJsonValue(text, "network.latency_us"), Position(0, 0));
  EXPECT_EQ(FindJsonValue(text, "cluster spec"), Position(0, 0));
  EXPECT_EQ(FindJsonValue(text, ""), Position(0, 0));
}

TEST(FindJsonValue, RepeatedKeysPointAtTheLastOneWhichIsKept) {
  // nlohmann::json keeps the last of repeated keys; the error is about that value.
  const std::string text = R"({"a": 1, "a": "two"})";
  EXPECT_EQ(FindJsonValue(text, "a"), Position(1, 15));
  EXPECT_EQ(nlohmann::json::parse(text)["a"], "two");
}

TEST(FindJsonValue, NestedArraysStringsWithEscapesAndARootName) {
  const std::string text = "[[1, [2, \"a\\\"],b\"]], {\"k\": [true, null]}]";
  // The text is [[1, [2, "a\"],b"]], {"k": [true, null]}]: the string starts at column 10,
  // null at 35.
  EXPECT_EQ(FindJsonValue(text, "jobs[0][1][1]", "jobs"), Position(1, 10));
  EXPECT_EQ(FindJsonValue(text, "jobs[1].k[1]", "jobs"), Position(1, 35));
  // Without the root name, "jobs" is a member name, and the root is no object.
  EXPECT_EQ(FindJsonValue(text, "jobs[1]"), Position(0, 0));
  // A root that is an object holding "jobs": the name is a member as usual.
  EXPECT_EQ(FindJsonValue(R"({"jobs": [{"gpus": "x"}]})", "jobs[0].gpus", "jobs"), Position(1, 20));
}

std::string ClusterError(const std::string& text) {
  try {
    ClusterSpec::FromJsonText(text, "spec.json", HardwareCatalog::Default());
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(JsonSchemaErrors, ClusterSpecErrorsNameLineAndColumnAndKeepTheirText) {
  const std::string spec =
      "{\"nodes\": [\n"
      "  {\"count\": 2, \"gpu_type\": \"A100-80GB\", \"gpus_per_node\": 8},\n"
      "  {\"count\": 1, \"gpu_type\": \"V100-32GB\", \"gpus_per_node\": \"8\"}\n"
      "]}\n";
  EXPECT_EQ(ClusterError(spec),
            "spec.json:3:58: nodes[1].gpus_per_node: expected a positive integer (at most "
            "100000000), got \"8\"");
  EXPECT_EQ(
      ClusterError("{\"nodes\": [{\"count\": 1, \"gpu_type\": \"B200\", \"gpus_per_node\": 8}]}")
          .substr(0, 63),
      "spec.json:1:37: nodes[0].gpu_type: unknown GPU type \"B200\"; val");
  // A missing key: at the object that lacks it.
  EXPECT_EQ(ClusterError("{\"nodes\": [\n  {\"gpu_type\": \"A100-80GB\", \"gpus_per_node\": 8}]}"),
            "spec.json:2:3: nodes[0]: missing required key \"count\"");
  EXPECT_EQ(ClusterError("{\"nodes\": [{\"count\": 1, \"gpu_type\": \"A100-80GB\", "
                         "\"gpus_per_node\": 8}],\n \"network\": {\"oversubscription\": 0.5}}"),
            "spec.json:2:34: network.oversubscription: expected a number >= 1");
  // Text as before: "nodes" is named in quotes.
  EXPECT_EQ(ClusterError("{\"nodes\": []}"),
            "spec.json:1:11: \"nodes\": expected a non-empty array of node groups");
  // An error about the document as a whole has no position to give.
  EXPECT_EQ(ClusterError("{}"), "spec.json: cluster spec: missing required key \"nodes\"");
}

TEST(JsonSchemaErrors, CatalogErrorsNameLineAndColumn) {
  try {
    HardwareCatalog::FromJsonText("{\"gpus\": [\n {\"name\": 7}]}", "gpus.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "gpus.json:2:11: gpus[0].name: expected a string, got 7");
  }
  try {
    ModelCatalog::FromJsonText("{\"models\": [{\"name\": \"m\", \"family\": \"rnn\"}]}",
                               "models.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "models.json:1:37: models[0].family: expected cnn, transformer or other, got "
                 "\"rnn\"");
  }
}

}  // namespace
}  // namespace clustersim
