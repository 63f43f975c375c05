// `clustersim plan` and `clustersim queueing` end to end.
//
// The planner against theory: on an M/M/c trace (one-GPU jobs, Poisson arrivals, exponential
// durations) with one-GPU nodes, nodes = GPUs = servers, so the smallest node count whose
// simulated mean wait meets the target must agree with the smallest c of Erlang C within one.
// The trace: 40,000 jobs, lambda = 0.008 jobs/s, mean duration 1,000 s, so a = 8 Erlangs.
// Erlang C (computed by hand from the Erlang B recursion, independently of the program):
//   c = 11: C = 0.24496, W_q = C x 1000 / (11 - 8) = 81.65 s
//   c = 12: C = 0.13984, W_q = C x 1000 / (12 - 8) = 34.96 s
// so for mean_wait <= 50 s the answer is c = 12, with wide margins on both sides (the sampling
// error of a 40,000-job mean wait is a few percent).
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <regex>
#include <sstream>

#include "sim/models/queueing.h"
#include "tests/cli/cli_test_util.h"

namespace clustersim::testing {
namespace {

constexpr int kExitBadInput = 2;
constexpr int kErlangAnswer = 12;

double Exponential(std::mt19937_64& rng, double mean) {
  const double u = (static_cast<double>(rng() >> 11) + 0.5) * 0x1.0p-53;  // (0, 1)
  return -mean * std::log(u);
}

struct SampleRates {
  double lambda = 0;  // jobs per second over the submission span
  double mu = 0;      // 1 / mean duration
};
SampleRates g_sample;

// Writes the M/M/c trace described at the top and records its sample rates in g_sample.
void WriteMmcTrace(const std::string& path) {
  std::mt19937_64 rng(20240611);
  std::ostringstream out;
  out.precision(17);
  out << "job_id,submit_time,gpus,duration\n";
  double t = 0, first = 0, total_duration = 0;
  const int jobs = 40'000;
  for (int i = 0; i < jobs; ++i) {
    t += Exponential(rng, 1 / 0.008);
    if (i == 0) first = t;
    const double duration = Exponential(rng, 1000);
    total_duration += duration;
    out << "j" << i << "," << t << ",1," << duration << "\n";
  }
  WriteFile(path, out.str());
  g_sample.lambda = jobs / (t - first);
  g_sample.mu = jobs / total_duration;
}

// Rows of a CSV file as maps column -> text (no quoted commas in what the planner writes).
std::vector<std::map<std::string, std::string>> ReadCsv(const std::string& path) {
  std::istringstream in(ReadFile(path));
  std::string line;
  std::vector<std::string> header;
  std::vector<std::map<std::string, std::string>> rows;
  auto split = [](const std::string& s) {
    std::vector<std::string> fields;
    std::string field;
    std::istringstream ss(s);
    while (std::getline(ss, field, ',')) fields.push_back(field);
    if (!s.empty() && s.back() == ',') fields.push_back("");
    return fields;
  };
  while (std::getline(in, line)) {
    if (header.empty()) {
      header = split(line);
      continue;
    }
    const auto fields = split(line);
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < header.size() && i < fields.size(); ++i) row[header[i]] = fields[i];
    rows.push_back(row);
  }
  return rows;
}

// The "smallest count" line of a node type: "  LABEL   N nodes (...".
int SmallestCount(const std::string& out, const std::string& label) {
  const std::regex re("\n  " + label + " +([0-9]+) nodes? \\(");
  std::smatch m;
  if (!std::regex_search(out, m, re)) return -1;
  return std::stoi(m[1]);
}

class PlanMmc : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    WriteMmcTrace(dir_->File("mmc.csv"));
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string Trace() { return dir_->File("mmc.csv"); }
  static TempDir* dir_;
};
TempDir* PlanMmc::dir_ = nullptr;

TEST_F(PlanMmc, ErlangCAnswerIsTheSmallestCountWithTheTargetMeanWait) {
  // The library agrees with the hand computation above.
  ASSERT_EQ(ServersForMeanWait(0.008, 1 / 1000.0, 50), kErlangAnswer);
}

TEST_F(PlanMmc, SimulatedAnswerAgreesWithErlangCWithinOneNode) {
  const std::string csv = dir_->File("points.csv");
  // Every job runs its trace duration (the M/M/c service times) on the A100s.
  const std::vector<std::string> args = {"plan",        "--trace", Trace(), "--node-type",
                                         "A100-80GBx1", "--slo",   "mean_wait<=50",
                                         "--runtime-model", "trace", "--jobs", "2", "--csv", csv};
  const CliResult r = RunCli(args);
  ASSERT_EQ(r.exit_code, 0) << Describe(args, r);
  const int answer = SmallestCount(r.out, "A100-80GBx1");
  EXPECT_NEAR(answer, kErlangAnswer, 1) << r.out;
  // The table holds the answer (pass) and the count below it (fail), with simulated mean waits
  // on the right side of 50 s and close to Erlang C's.
  std::map<int, double> wait;
  std::map<int, std::string> pass;
  for (const auto& row : ReadCsv(csv)) {
    const int n = std::stoi(row.at("A100-80GBx1"));
    wait[n] = std::stod(row.at("wait_seconds_mean"));
    pass[n] = row.at("meets_all");
  }
  ASSERT_TRUE(wait.count(answer) && wait.count(answer - 1)) << r.out;
  EXPECT_EQ(pass[answer], "1");
  EXPECT_EQ(pass[answer - 1], "0");
  EXPECT_LE(wait[answer], 50);
  EXPECT_GT(wait[answer - 1], 50);
  // Against Erlang C at the sample's own rates (its offered load is 8 Erlangs up to sampling
  // error): a 40,000-job mean wait has a relative sampling error of several percent.
  for (int c : {answer - 1, answer}) {
    const double erlang = SolveMmc(g_sample.lambda, g_sample.mu, c).mean_wait;
    EXPECT_NEAR(wait[c] / erlang, 1.0, 0.25)
        << "c = " << c << ": simulated " << wait[c] << " s, Erlang C " << erlang << " s";
    std::printf("M/M/%d: simulated mean wait %.1f s, Erlang C %.1f s (sample a = %.3f)\n", c,
                wait[c], erlang, g_sample.lambda / g_sample.mu);
  }
  // The Erlang C line reports a = 8 Erlangs (the sample's a, within sampling error) and c = 12.
  EXPECT_NE(r.out.find("c = 12 GPUs"), std::string::npos) << r.out;
}

TEST_F(PlanMmc, BracketSearchFindsTheSameAnswerFromAFarStart) {
  // Starting at 40 nodes (everything passes) the search must come down by bisection to the same
  // boundary, and from 2 nodes (unstable) it must double its way up.
  for (const std::string start : {"40", "2"}) {
    const std::vector<std::string> args = {
        "plan",           "--trace", Trace(), "--node-type",   "A100-80GBx1", "--slo",
        "mean_wait<=50s", "--jobs",  "2",     "--start-nodes", start, "--runtime-model", "trace"};
    const CliResult r = RunCli(args);
    ASSERT_EQ(r.exit_code, 0) << Describe(args, r);
    EXPECT_NEAR(SmallestCount(r.out, "A100-80GBx1"), kErlangAnswer, 1) << r.out;
  }
}

TEST_F(PlanMmc, CheapestMixOfEquivalentNodesIsAllOfTheCheaperType) {
  // Two one-GPU node types, equivalent under the trace runtime model (every job runs its trace
  // duration), priced $2 and $1 per GPU-hour. Any mix with as many nodes in all as the single
  // type's answer behaves the same, so the cheapest meeting the SLO is the cheaper type alone,
  // and every mix the search settles on has that same total.
  const std::string csv = dir_->File("mix.csv");
  const std::vector<std::string> args = {"plan",
                                         "--trace",
                                         Trace(),
                                         "--node-types",
                                         "A100-80GBx1,V100-32GBx1",
                                         "--price",
                                         "A100-80GB=2",
                                         "--price",
                                         "V100-32GBx1=1",
                                         "--runtime-model",
                                         "trace",
                                         "--slo",
                                         "mean_wait<=50",
                                         "--mix-steps",
                                         "2",
                                         "--jobs",
                                         "2",
                                         "--csv",
                                         csv};
  const CliResult r = RunCli(args);
  ASSERT_EQ(r.exit_code, 0) << Describe(args, r);
  const int a = SmallestCount(r.out, "A100-80GBx1");
  const int v = SmallestCount(r.out, "V100-32GBx1");
  EXPECT_EQ(a, v) << r.out;
  const std::regex cheapest("cheapest meeting the SLO: ([0-9]+) x V100-32GBx1 \\(");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, cheapest)) << r.out;
  EXPECT_EQ(std::stoi(m[1]), v);
  // Mix points: passing ones have at least `v` nodes in all; failing ones fewer.
  int mixes = 0;
  for (const auto& row : ReadCsv(csv)) {
    if (row.at("search") != "mix") continue;
    ++mixes;
    const int total = std::stoi(row.at("A100-80GBx1")) + std::stoi(row.at("V100-32GBx1"));
    EXPECT_EQ(row.at("meets_all") == "1", total >= v) << "mix with " << total << " nodes";
  }
  EXPECT_GT(mixes, 0) << r.out;
}

// One runtime model for every candidate (docs/plan.md): the A100 nodes' answer is the same alone
// and beside a V100 type, and both invocations state the model and its reference (the trace names
// no GPU type: the catalog's V100-16GB, so the A100s run its jobs faster than their durations).
TEST_F(PlanMmc, ATypeGetsTheSameCountAloneAndBesideAnother) {
  const std::vector<std::string> alone = {"plan",  "--trace", Trace(), "--node-type",
                                          "A100-80GBx1", "--slo", "mean_wait<=50", "--jobs", "2"};
  const std::vector<std::string> beside = {"plan",        "--trace",       Trace(),
                                           "--node-types", "A100-80GBx1,V100-32GBx1",
                                           "--slo",        "mean_wait<=50", "--mix-steps",
                                           "0",            "--jobs",        "2"};
  const CliResult a = RunCli(alone);
  const CliResult b = RunCli(beside);
  ASSERT_EQ(a.exit_code, 0) << Describe(alone, a);
  ASSERT_EQ(b.exit_code, 0) << Describe(beside, b);
  const int count = SmallestCount(a.out, "A100-80GBx1");
  EXPECT_GT(count, 0) << a.out;
  EXPECT_EQ(SmallestCount(b.out, "A100-80GBx1"), count) << a.out << b.out;
  // Faster than the durations say: fewer nodes than Erlang C's 12 for the trace's own times.
  EXPECT_LT(count, kErlangAnswer) << a.out;
  for (const CliResult* r : {&a, &b}) {
    EXPECT_NE(r->out.find("runtime hardware:V100-16GB"), std::string::npos) << r->out;
    EXPECT_NE(r->out.find("trace durations are times on V100-16GB"), std::string::npos)
        << r->out;
  }
}

TEST_F(PlanMmc, BudgetBelowTheAnswerMeansNothingMeetsIt) {
  // 12 one-GPU A100 nodes cost 12 x $5.12 = $61.44/h; with $40/h at most 7 nodes are affordable.
  const std::vector<std::string> args = {
      "plan",  "--trace",       Trace(),    "--node-type", "A100-80GBx1",
      "--slo", "mean_wait<=50", "--budget", "40",          "--jobs",
      "2",     "--runtime-model", "trace"};
  const CliResult r = RunCli(args);
  EXPECT_EQ(r.exit_code, 1) << Describe(args, r);
  EXPECT_NE(r.out.find("not met up to 7 nodes"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("no evaluated configuration meets the SLO within the budget"),
            std::string::npos)
      << r.out;
}

TEST(Plan, PrintsTheEvaluatedPointsOnTheBundledTrace) {
  const std::vector<std::string> args = {
      "plan",  "--first",      "400",    "--node-type", "dgx-a100",    "--slo", "p95_wait<=2h",
      "--slo", "mean_jct<=1d", "--jobs", "2",           "--max-evals", "8"};
  const CliResult r = RunCli(args);
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << Describe(args, r);
  EXPECT_NE(r.out.find("evaluated points"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Erlang C: offered load"), std::string::npos) << r.out;
  // Table rows: "  N    dgx-a100   COUNT  GPUS  ...  pass|FAIL ...".
  const std::regex row("\n  [0-9]+ +dgx-a100 +[0-9]+ +[0-9]+ .*(pass|FAIL)");
  EXPECT_TRUE(std::regex_search(r.out, row)) << r.out;
}

// Bad input: a clear message and exit code 2.
struct BadPlanCase {
  std::vector<std::string> args;
  std::string expected;
};

TEST(Plan, BadInputIsRejectedWithExitCode2) {
  const std::vector<BadPlanCase> cases = {
      {{"--node-type", "A100-80GBx8", "--slo", "p95_wait=3600"}, "expected METRIC<=VALUE"},
      {{"--node-type", "A100-80GBx8", "--slo", "p97_wait<=3600"}, "unknown metric \"p97_wait\""},
      {{"--node-type", "A100-80GBx8", "--slo", "p95_wait<=1y"}, "unit \"y\""},
      {{"--node-type", "A100-80GBx8", "--slo", "utilization>=abc"}, "expected a number"},
      {{"--node-type", "B200x8", "--slo", "p95_wait<=1h"}, "unknown GPU type \"B200\""},
      {{"--node-type", "A100-80GB", "--slo", "p95_wait<=1h"}, "expected GPUTYPExGPUS_PER_NODE"},
      {{"--node-type", "A100-80GBx0", "--slo", "p95_wait<=1h"}, "GPUs per node must be"},
      {{"--node-type", "default", "--slo", "p95_wait<=1h"}, "mixes node groups"},
      {{"--node-type", "A100-80GBx8", "--slo", "p95_wait<=1h", "--price", "H100-80GB=3"},
       "no --node-type has this name"},
      {{"--node-type", "A100-80GBx8"}, "expected at least one --slo"},
      {{"--slo", "p95_wait<=1h"}, "expected at least one --node-type"},
      {{"--node-type", "A100-80GBx8", "--slo", "p95_wait<=1h", "--policy", "nope"},
       "unknown policy"},
  };
  for (const BadPlanCase& c : cases) {
    std::vector<std::string> args = {"plan"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    const CliResult r = RunCli(args);
    EXPECT_EQ(r.exit_code, kExitBadInput) << Describe(args, r);
    EXPECT_NE(r.err.find(c.expected), std::string::npos) << Describe(args, r);
  }
}

TEST(Queueing, PrintsTheErlangCFiguresOfThePublishedExample) {
  // 48 Erlangs on 55 agents (see tests/sim/models/queueing_test.cc): P(wait) 0.2387, ASA 8.18 s.
  const std::vector<std::string> args = {
      "queueing", "--lambda", "0.2", "--mu", "0.004166666666666667", "--c", "55"};
  const CliResult r = RunCli(args);
  ASSERT_EQ(r.exit_code, 0) << Describe(args, r);
  EXPECT_NE(r.out.find("48 Erlangs"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("0.2387"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("8.18"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("p95 wait"), std::string::npos) << r.out;
}

TEST(Queueing, UnstableAndBadInput) {
  const CliResult unstable = RunCli({"queueing", "--lambda", "3", "--mu", "1", "--c", "3"});
  EXPECT_EQ(unstable.exit_code, 0);
  EXPECT_NE(unstable.out.find("unstable"), std::string::npos) << unstable.out;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"queueing", "--lambda", "0", "--mu", "1", "--c", "3"},
        {"queueing", "--lambda", "1", "--mu", "-1", "--c", "3"},
        {"queueing", "--lambda", "1", "--mu", "1", "--c", "0"},
        {"queueing", "--lambda", "1", "--mu", "1"},
        {"queueing", "--lambda", "x", "--mu", "1", "--c", "2"}}) {
    const CliResult r = RunCli(args);
    EXPECT_EQ(r.exit_code, kExitBadInput) << Describe(args, r);
  }
}

}  // namespace
}  // namespace clustersim::testing
