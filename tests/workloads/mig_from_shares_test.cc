// --mig-from-shares (docs/mig.md#from-gpu-shares): the smallest profile holding a share, from the
// profile table of NVIDIA's MIG User Guide (A100-40GB: 1g.5gb 1 compute slice of 7, 1g.10gb 1,
// 2g.10gb 2, 3g.20gb 3, 4g.20gb 4, 7g.40gb 7), and a schedule worked by hand.
#include "workloads/mig_from_shares.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "app/run.h"
#include "sim/util/error.h"
#include "tests/cli/cli_test_util.h"

namespace clustersim {
namespace {

using testing::Database;
using testing::TempDir;
using testing::TestData;
using testing::WriteFile;

std::string Name(std::span<const MigProfile> profiles, int milli) {
  const int i = SmallestProfileHolding(profiles, milli);
  return i < 0 ? "" : profiles[i].name;
}

// k slices hold a share s when k / 7 >= s / 1000: 142 milli x 7 = 994 <= 1,000 fits one slice,
// 143 x 7 = 1,001 does not; 428 x 7 = 2,996 fits three, 429 does not; 571 fits four, 572 not.
// Of two profiles with one slice the one with less memory (1g.5gb) is the smaller.
TEST(MigFromShares, TheSmallestProfileWhoseComputeShareHoldsTheRequest) {
  const auto a100 = MigProfilesOf("A100-40GB");
  EXPECT_EQ(Name(a100, 1), "1g.5gb");
  EXPECT_EQ(Name(a100, 142), "1g.5gb");
  EXPECT_EQ(Name(a100, 143), "2g.10gb");
  EXPECT_EQ(Name(a100, 285), "2g.10gb");
  EXPECT_EQ(Name(a100, 286), "3g.20gb");
  EXPECT_EQ(Name(a100, 428), "3g.20gb");
  EXPECT_EQ(Name(a100, 429), "4g.20gb");
  EXPECT_EQ(Name(a100, 571), "4g.20gb");
  EXPECT_EQ(Name(a100, 572), "7g.40gb");
  EXPECT_EQ(Name(a100, 999), "7g.40gb");
  EXPECT_EQ(Name(MigProfilesOf("A100-80GB"), 500), "4g.40gb");
}

TEST(MigFromShares, MapsSharesOnlyAndFreesThemOfTheirShare) {
  std::vector<Job> jobs(4);
  jobs[0].gpus = 1;
  jobs[0].gpu_milli = 500;  // a share
  jobs[1].gpus = 1;         // a whole GPU
  jobs[2].gpus = 2;
  jobs[3].gpus = 1;
  jobs[3].gpu_milli = 300;
  jobs[3].mig_profile = MigProfileId("1g.5gb");  // asks for a profile already: kept
  EXPECT_EQ(MapSharesToMig(jobs, MigProfilesOf("A100-40GB")), 1);
  EXPECT_EQ(MigProfileName(jobs[0].mig_profile), "4g.20gb");
  EXPECT_EQ(jobs[0].gpu_milli, 0);
  EXPECT_EQ(jobs[1].mig_profile, 0);
  EXPECT_EQ(jobs[2].mig_profile, 0);
  EXPECT_EQ(MigProfileName(jobs[3].mig_profile), "1g.5gb");
}

// tests/data/mig/shares_openb.csv: six pods at 0, each for 100 s, asking 100, 500, 500, 150,
// 300 and 1,000 milli, on one A100-80GB GPU in MIG mode and one whole A100-80GB, under fcfs
// (strictly in order). The shares become 1g.10gb (start 0-6, 1 memory slice), 4g.40gb (start 0
// only, 4 slices), 4g.40gb, 2g.20gb (starts 0, 2, 4; 2 slices) and 3g.40gb (starts 0, 4; 4
// slices). t=0: p1 at slice 0; p2's 4g.40gb needs slices 0-3: waits (and fcfs holds p3-p6).
// t=100: p2 at 0-3; p3 waits. t=200: p3 at 0-3, p4 at 4-5; p5 needs 0-3 or 4-7: waits.
// t=300: p5 at 0-3 and p6 on the whole GPU.
TEST(MigFromShares, OpenbSharesRunAsMigInstancesOnAHandWorkedSchedule) {
  TempDir dir;
  const std::string cluster = dir.File("mig.json");
  WriteFile(cluster,
            R"({"nodes":[{"count":1,"gpu_type":"A100-80GB","gpus_per_node":1,"mig":true},)"
            R"({"count":1,"gpu_type":"A100-80GB","gpus_per_node":1}]})");
  RunConfig config;
  config.trace_path = TestData("mig/shares_openb.csv");
  config.cluster = cluster;
  config.out = dir.File("out.sqlite");
  config.mig_from_shares = true;
  config.engine.check_invariants = true;
  ExecuteRun(config);
  Database db(config.out);
  const double expected[] = {0, 100, 200, 200, 300, 300};
  for (int i = 0; i < 6; ++i) {
    const std::string id = "p" + std::to_string(i + 1);
    EXPECT_EQ(db.Number("SELECT start_time FROM jobs WHERE job_id = '" + id + "'"), expected[i])
        << id;
  }
  // Without MIG mode anywhere the option has nothing to map onto: refused before the run.
  WriteFile(cluster, R"({"nodes":[{"count":2,"gpu_type":"A100-80GB","gpus_per_node":1}]})");
  config.out = dir.File("refused.sqlite");
  EXPECT_THROW(ExecuteRun(config), InputError);
}

}  // namespace
}  // namespace clustersim
