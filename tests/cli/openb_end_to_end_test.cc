// The bundled Alibaba openb pod list on the cluster made from its node list, end to end through
// the command line: every pod is accounted for (run, or rejected with a reason).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "tests/cli/cli_test_util.h"

namespace clustersim::testing {
namespace {

const std::string kOpenb = std::string(CLUSTERSIM_SOURCE_DIR) + "/traces/alibaba_gpu_v2023/";

// Counts the pods of the list, and those with num_gpu == 0, by reading the CSV here.
std::pair<int, int> CountPods() {
  std::ifstream in(kOpenb + "openb_pod_list_default.csv");
  std::string line;
  std::getline(in, line);  // name,cpu_milli,memory_mib,num_gpu,gpu_milli,...
  int pods = 0, cpu_only = 0;
  while (std::getline(in, line)) {
    std::stringstream fields(line);
    std::string field;
    for (int i = 0; i < 4; ++i) std::getline(fields, field, ',');
    ++pods;
    cpu_only += field == "0";
  }
  return {pods, cpu_only};
}

TEST(OpenbEndToEnd, EveryPodRunsOrIsRejectedWithAReason) {
  TempDir dir;
  const std::string spec = dir.File("openb.json");
  // G2 and G3 are anonymized models without a catalog entry: without a mapping the command fails
  // and names them.
  CliResult unmapped = RunCli({"trace", "cluster-from",
                               kOpenb + "openb_node_list_gpu_node.csv", "--out", spec});
  EXPECT_EQ(unmapped.exit_code, 2);
  EXPECT_NE(unmapped.err.find("G2 (549 nodes)"), std::string::npos) << unmapped.err;
  CliResult made = RunCli({"trace", "cluster-from",
                           kOpenb + "openb_node_list_gpu_node.csv", "--map-gpu",
                           "G2=A100-40GB,G3=V100-32GB", "--out", spec});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  // The shared traces README: 1,213 nodes with GPUs, 6,212 GPUs.
  EXPECT_NE(made.err.find("1213 GPU nodes, 6212 GPUs"), std::string::npos)
      << made.err;

  const std::string db = dir.File("openb.sqlite");
  CliResult run = RunCli({"run", "--trace", kOpenb + "openb_pod_list_default.csv",
                          "--cluster", spec, "--runtime-model", "trace", "--out", db});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto [pods, cpu_only] = CountPods();
  EXPECT_EQ(pods, 8152);
  Database database(db);
  auto count = [&](const std::string& where) {
    return std::stoi(*database.Query("SELECT COUNT(*) FROM jobs WHERE " + where)[0][0]);
  };
  EXPECT_EQ(count("1"), pods);
  EXPECT_EQ(count("status = 'rejected' AND reason IS NOT NULL"), cpu_only);
  EXPECT_EQ(count("status = 'completed'"), pods - cpu_only);
}

}  // namespace
}  // namespace clustersim::testing
