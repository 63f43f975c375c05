// Trace transforms, the sanity report, trace statistics, native CSV writing and the generator.
#include "workloads/transforms.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "sim/engine/summary.h"
#include "sim/util/error.h"
#include "tests/test_util.h"
#include "workloads/generator.h"
#include "workloads/reader.h"

namespace clustersim {
namespace {

using testing::MakeJob;
using testing::TempPath;

Trace FiveJobs() {
  // Submissions 0, 10, 20, 30, 40 s; vc a, b, a, b, a; users u1, u2, u1, u1, u2.
  Trace trace;
  const char* vcs[] = {"a", "b", "a", "b", "a"};
  const char* users[] = {"u1", "u2", "u1", "u1", "u2"};
  for (int i = 0; i < 5; ++i) {
    Job job = MakeJob("j" + std::to_string(i), 10.0 * i, 1 + i % 2, 100);
    job.vc = vcs[i];
    job.user = users[i];
    job.line = i + 2;
    trace.jobs.push_back(job);
  }
  return trace;
}

std::vector<std::string> Ids(const Trace& trace) {
  std::vector<std::string> ids;
  for (const Job& job : trace.jobs) ids.push_back(job.id);
  return ids;
}

TEST(TraceFilter, WindowVcUserAndFirstNKeepExactlyTheNamedJobs) {
  Trace trace = FiveJobs();
  TraceFilter filter;
  ParseWindow("10:40", &filter);  // keeps 10, 20, 30
  filter.vcs = {"b"};             // keeps j1 (10), j3 (30)
  FilterCounts counts = ApplyFilter(filter, &trace);
  EXPECT_EQ(Ids(trace), (std::vector<std::string>{"j1", "j3"}));
  EXPECT_EQ(counts.before, 5);
  EXPECT_EQ(counts.outside_window, 2);
  EXPECT_EQ(counts.other_vc, 1);
  EXPECT_EQ(counts.kept, 2);

  Trace second = FiveJobs();
  TraceFilter by_user;
  by_user.users = {"u1"};  // j0, j2, j3
  by_user.first_n = 2;     // j0, j2
  counts = ApplyFilter(by_user, &second);
  EXPECT_EQ(Ids(second), (std::vector<std::string>{"j0", "j2"}));
  EXPECT_EQ(counts.other_user, 2);
  EXPECT_EQ(counts.beyond_first_n, 1);
}

TEST(TraceFilter, LoadFactorDividesInterArrivalGapsFromTheFirstKeptJob) {
  // Window [10, inf) keeps 10, 20, 30, 40; twice the arrival rate halves the gaps of 10 s ->
  // 10, 15, 20, 25.
  Trace trace = FiveJobs();
  TraceFilter filter;
  ParseWindow("10:", &filter);
  filter.load_factor = 2;
  ApplyFilter(filter, &trace);
  ASSERT_EQ(trace.jobs.size(), 4u);
  EXPECT_DOUBLE_EQ(trace.jobs[0].submit_time, 10);
  EXPECT_DOUBLE_EQ(trace.jobs[1].submit_time, 15);
  EXPECT_DOUBLE_EQ(trace.jobs[3].submit_time, 25);
  filter.load_factor = 0;
  EXPECT_THROW(ApplyFilter(filter, &trace), InputError);
}

TEST(TraceFilter, GpuTypeMappingRenamesEachNameInTheList) {
  Trace trace = FiveJobs();
  trace.jobs[0].gpu_type = "K80|P100-16GB";
  TraceFilter filter;
  filter.gpu_type_map = ParseGpuMap("K80=V100-16GB,P100-16GB=A100-40GB");
  ApplyFilter(filter, &trace);
  EXPECT_EQ(trace.jobs[0].gpu_type, "V100-16GB|A100-40GB");
  EXPECT_THROW(ParseGpuMap("K80"), InputError);
}

TEST(SanityReport, CountsEachProblemWithTheFirstOffendingLines) {
  // Lines 2..7 in file order: submissions 0, 50, 40 (unsorted), 60, 30 (unsorted), 70.
  // Line 3 requests 64 GPUs on a 16-GPU cluster; lines 4 and 6 have zero duration; line 7
  // repeats line 2's id; line 5 has an unknown status.
  Trace trace;
  const double submits[] = {0, 50, 40, 60, 30, 70};
  for (int i = 0; i < 6; ++i) {
    Job job = MakeJob(i == 5 ? "x0" : "x" + std::to_string(i), submits[i], 1, 10);
    job.line = i + 2;
    trace.jobs.push_back(job);
  }
  trace.jobs[1].gpus = 64;
  trace.jobs[2].duration = 0;
  trace.jobs[4].duration = 0;
  trace.jobs[3].trace_status = "Exploded";
  const auto& catalog = HardwareCatalog::Default();
  const Cluster cluster(ClusterSpec::FromJsonText(testing::Nodes(2, 8), "c", catalog), catalog);
  const SanityReport report = CheckTraceSanity(trace, &cluster);
  auto item = [&](const std::string& prefix) -> const SanityItem* {
    for (const auto& i : report.items) {
      if (i.what.rfind(prefix, 0) == 0) return &i;
    }
    return nullptr;
  };
  ASSERT_NE(item("jobs larger"), nullptr);
  EXPECT_EQ(item("jobs larger")->first_lines, (std::vector<int64_t>{3}));
  EXPECT_EQ(item("jobs of zero duration")->first_lines, (std::vector<int64_t>{4, 6}));
  EXPECT_EQ(item("rows submitted earlier")->first_lines, (std::vector<int64_t>{4, 6}));
  EXPECT_EQ(item("duplicate job ids")->first_lines, (std::vector<int64_t>{7}));
  EXPECT_EQ(item("unknown trace statuses")->first_lines, (std::vector<int64_t>{5}));
  EXPECT_EQ(item("jobs requesting 0 GPUs"), nullptr);
}

TEST(SanityReport, AJobOfProcessorsThatASitePartitionCountsByNodesIsNotLargerThanTheCluster) {
  // 8 one-GPU nodes of 16 processors (processors_per_gpu 16): a job of 64 processors takes 4
  // GPUs and fits; one of 129 takes 9 and does not.
  Trace trace;
  for (int processors : {64, 129}) {
    Job job = MakeJob("p" + std::to_string(processors), 0, processors, 10);
    job.line = static_cast<int64_t>(trace.jobs.size()) + 2;
    trace.jobs.push_back(job);
  }
  const auto& catalog = HardwareCatalog::Default();
  const Cluster cluster(
      ClusterSpec::FromJsonText(R"({"nodes":[{"count":8,"gpu_type":"A100-80GB","gpus_per_node":1}],
                                   "site":{"partitions":[{"name":"p","processors_per_gpu":16}]}})",
                                "c", catalog),
      catalog);
  const SanityReport report = CheckTraceSanity(trace, &cluster);
  ASSERT_EQ(report.items.size(), 1u);
  EXPECT_EQ(report.items[0].what.rfind("jobs larger", 0), 0u) << report.items[0].what;
  EXPECT_EQ(report.items[0].first_lines, (std::vector<int64_t>{3}));
}

TEST(SanityReport, WarnsOfPriorityClassesWithoutALevelAndOfMapEntriesThatMatchNothing) {
  // Lines 2..5: classes LS (built-in 2), gold, gold, none. gold has no level (level 0 given);
  // the map names "silver", which no job has.
  Trace trace;
  const char* classes[] = {"LS", "gold", "gold", ""};
  for (int i = 0; i < 4; ++i) {
    Job job = MakeJob("j" + std::to_string(i), i, 1, 10);
    job.line = i + 2;
    job.priority_class = classes[i];
    trace.jobs.push_back(job);
  }
  trace.priority_map = {{"silver", 1}};
  const SanityReport report = CheckTraceSanity(trace, nullptr);
  ASSERT_EQ(report.items.size(), 2u);
  EXPECT_NE(report.items[0].what.find("(gold)"), std::string::npos) << report.items[0].what;
  EXPECT_EQ(report.items[0].first_lines, (std::vector<int64_t>{3, 4}));
  EXPECT_NE(report.items[1].what.find("(silver)"), std::string::npos) << report.items[1].what;
  EXPECT_EQ(report.items[1].count, 1);
  // One class everywhere orders nothing, whatever its level: no warning.
  for (Job& job : trace.jobs) job.priority_class = "gold";
  trace.priority_map.clear();
  EXPECT_TRUE(CheckTraceSanity(trace, nullptr).clean());
}

TEST(TraceStats, CountsJobsPerPriorityLevelWithTheTracesClassNames) {
  Trace trace = FiveJobs();
  trace.jobs[0].priority = 2;
  trace.jobs[0].priority_class = "LS";
  trace.jobs[1].priority = 2;
  trace.jobs[1].priority_class = "LS";
  const TraceStats s = ComputeTraceStats(trace);
  EXPECT_EQ(s.jobs_by_priority.at(2).at("LS"), 2);
  EXPECT_EQ(s.jobs_by_priority.at(0).at(""), 3);
  const std::string text = FormatTraceStats(s);
  EXPECT_NE(text.find("priority        2 high [LS]: 2 (40.0%)  0 low: 3 (60.0%)"),
            std::string::npos)
      << text;
  // A trace without classes: no priority line.
  EXPECT_EQ(FormatTraceStats(ComputeTraceStats(FiveJobs())).find("priority"), std::string::npos);
}

TEST(TraceStats, SummarizesSizesDurationsAndLoad) {
  // FiveJobs: GPUs 1, 2, 1, 2, 1; durations all 100 s; submissions span 40 s.
  // GPU-hours = 7 x 100 / 3600; arrivals = 4 gaps in 40 s = 360 per hour;
  // offered GPU-hours per day = (700 / 3600) / (40 / 86400) = 420.
  const TraceStats s = ComputeTraceStats(FiveJobs());
  EXPECT_EQ(s.jobs, 5);
  EXPECT_EQ(s.jobs_by_gpus.at(1), 3);
  EXPECT_EQ(s.jobs_by_gpus.at(2), 2);
  EXPECT_DOUBLE_EQ(s.duration_p50, 100);
  EXPECT_NEAR(s.gpu_hours, 700.0 / 3600, 1e-12);
  EXPECT_NEAR(s.arrivals_per_hour, 360, 1e-9);
  EXPECT_NEAR(s.offered_gpu_hours_per_day, 420, 1e-9);
}

TEST(NativeCsvWriter, WhatItWritesReadsBackIdentically) {
  Trace trace = FiveJobs();
  trace.jobs[1].id = "has,comma \"and quote\"";
  trace.jobs[2].walltime = 123.5;
  trace.jobs[3].gpu_type = "A100-80GB|H100-80GB";
  trace.jobs[4].submit_time = 40.1;
  const std::string path = TempPath("written.csv");
  WriteNativeCsv(trace, path);
  const Trace back = LoadTrace(path);
  ASSERT_EQ(back.jobs.size(), 5u);
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(back.jobs[i].id, trace.jobs[i].id);
    EXPECT_EQ(back.jobs[i].submit_time, trace.jobs[i].submit_time);
    EXPECT_EQ(back.jobs[i].gpus, trace.jobs[i].gpus);
    EXPECT_EQ(back.jobs[i].walltime, trace.jobs[i].walltime);
    EXPECT_EQ(back.jobs[i].gpu_type, trace.jobs[i].gpu_type);
    EXPECT_EQ(back.jobs[i].vc, trace.jobs[i].vc);
    EXPECT_EQ(back.jobs[i].user, trace.jobs[i].user);
  }
}

std::string WriteFile(const std::string& name, const std::string& text) {
  const std::string path = TempPath(name);
  std::ofstream(path) << text;
  return path;
}

// Filters applied while reading (job_sink.h) must keep what filtering the whole trace would.
TEST(StreamingFilter, FirstNOfAnUnsortedWallClockFileKeepsTheEarliestSubmissions) {
  // philly-csv rows out of order; minutes 5, 1, 4, 2, 3 after 10:00.
  const std::string path = WriteFile("unsorted_philly.csv",
                                     "timestamp,duration,num_gpus,gpu_time,cluster\n"
                                     "2017-10-01 10:05:00,60,1,60,a\n"
                                     "2017-10-01 10:01:00,60,2,120,a\n"
                                     "2017-10-01 10:04:00,60,1,60,b\n"
                                     "2017-10-01 10:02:00,60,4,240,b\n"
                                     "2017-10-01 10:03:00,60,1,60,a\n");
  TraceFilter filter;
  filter.first_n = 2;
  FilterCounts counts;
  const Trace trace = LoadTrace(path, "", filter, &counts);
  ASSERT_EQ(trace.jobs.size(), 2u);
  // The origin is the earliest submission (10:01, line 3): kept are lines 3 (0 s) and 5 (60 s).
  EXPECT_EQ(trace.jobs[0].line, 3);
  EXPECT_EQ(trace.jobs[0].submit_time, 0);
  EXPECT_EQ(trace.jobs[1].line, 5);
  EXPECT_EQ(trace.jobs[1].submit_time, 60);
  EXPECT_EQ(counts.before, 5);
  EXPECT_EQ(counts.beyond_first_n, 3);
  EXPECT_EQ(counts.kept, 2);
}

TEST(StreamingFilter, WindowIsRelativeToTheEarliestSubmissionEvenWhenThatJobIsFilteredOut) {
  // The earliest row (09:00, vc b) is excluded by --vc a but still sets the origin, so the
  // vc-a job at 10:00 is at 3600 s: inside [0, 3601), outside [0, 3600).
  const std::string path = WriteFile("origin_philly.csv",
                                     "timestamp,duration,num_gpus,gpu_time,cluster\n"
                                     "2017-10-01 10:00:00,60,1,60,a\n"
                                     "2017-10-01 09:00:00,60,1,60,b\n");
  TraceFilter filter;
  filter.vcs = {"a"};
  ParseWindow("0:3601", &filter);
  FilterCounts counts;
  Trace trace = LoadTrace(path, "", filter, &counts);
  ASSERT_EQ(trace.jobs.size(), 1u);
  EXPECT_EQ(trace.jobs[0].submit_time, 3600);
  EXPECT_EQ(counts.other_vc, 1);
  ParseWindow("0:3600", &filter);
  trace = LoadTrace(path, "", filter, &counts);
  EXPECT_TRUE(trace.jobs.empty());
  EXPECT_EQ(counts.outside_window, 1);
  EXPECT_EQ(counts.other_vc, 1);
}

TEST(StreamingFilter, DuplicateIdsAreFoundAmongExcludedRowsToo) {
  // The duplicate (line 5, column 1) is beyond --first 1, but the file is still wrong.
  const std::string path = WriteFile("dup.csv",
                                     "job_id,submit_time,gpus,duration\n"
                                     "a,0,1,10\n"
                                     "b,1,1,10\n"
                                     "c,2,1,10\n"
                                     "b,3,1,10\n");
  TraceFilter filter;
  filter.first_n = 1;
  try {
    LoadTrace(path, "", filter);
    FAIL() << "expected a duplicate-id error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("dup.csv:5:1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("duplicate job_id \"b\" (first on line 3)"),
              std::string::npos)
        << e.what();
  }
}

TEST(StreamingFilter, SinkKeepsAtMostTwiceFirstNWhileReading) {
  // 10,000 jobs submitted in decreasing time order; the 3 kept must be the 3 latest added
  // (earliest submitted), and the sink may never have held more than 6.
  TraceFilter filter;
  filter.first_n = 3;
  JobSink sink(filter, 0.0);
  for (int i = 0; i < 10'000; ++i) {
    Job job = MakeJob("j" + std::to_string(i), 10'000.0 - i, 1, 1);
    job.line = i + 2;
    sink.Add(std::move(job));
  }
  FilterCounts counts;
  const std::vector<Job> kept = sink.Finish(&counts);
  ASSERT_EQ(kept.size(), 3u);
  EXPECT_EQ(kept[0].id, "j9999");
  EXPECT_EQ(kept[1].id, "j9998");
  EXPECT_EQ(kept[2].id, "j9997");
  EXPECT_EQ(counts.beyond_first_n, 9'997);
  EXPECT_EQ(sink.earliest(), 1.0);
  EXPECT_LE(sink.max_held(), 6u);
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The size `trace generate` refuses above the free disk space is estimated from the columns'
// average digits; held against written files of both duration distributions and a model column.
TEST(Generator, EstimatedBytesAreWithinFivePercentOfTheWrittenFile) {
  GeneratorOptions options;
  for (const auto& [jobs, durations, models] :
       std::vector<std::tuple<int64_t, std::string, std::string>>{
           {200000, "exponential", ""},
           {50000, "philly", ""},
           {30000, "exponential", "resnet50:1,bert-large:2"},
           {1000, "exponential", ""}}) {
    options.jobs = jobs;
    options.durations = durations;
    options.models = models.empty() ? decltype(options.models)() : ParseModelMix(models);
    const std::string path = TempPath("estimate.csv");
    WriteSyntheticTrace(options, path);
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    const double written = static_cast<double>(in.tellg());
    EXPECT_NEAR(EstimatedTraceBytes(options) / written, 1.0, 0.05)
        << jobs << " jobs, " << durations << " " << models << ": " << written << " bytes";
  }
}

// The memory `trace generate` refuses above what is available: per job its duration (8 bytes),
// GPUs and model index (4 + 4), arrival time (8) and gap (8).
TEST(Generator, EstimatedMemoryIsThirtyTwoBytesAJob) {
  GeneratorOptions options;
  options.jobs = 1000;
  EXPECT_EQ(EstimatedGeneratorMemoryBytes(options), 32000.0);
  options.jobs = 100000000000;
  EXPECT_EQ(EstimatedGeneratorMemoryBytes(options), 3.2e12);
}

TEST(Generator, SameOptionsGiveTheSameBytesAndOtherSeedsDoNot) {
  GeneratorOptions options;
  options.jobs = 2000;
  const std::string a = TempPath("ga.csv"), b = TempPath("gb.csv"),
                    c = TempPath("gc.csv");
  WriteSyntheticTrace(options, a);
  WriteSyntheticTrace(options, b);
  options.seed = 43;
  WriteSyntheticTrace(options, c);
  EXPECT_EQ(ReadAll(a), ReadAll(b));
  EXPECT_NE(ReadAll(a), ReadAll(c));
}

TEST(Generator, PoissonGapsAreExponentialAndSizesArePhillys) {
  // Between the first and last submission the arrivals are a Poisson process conditioned on its
  // count: the gaps are exponential, so the share of gaps longer than the mean gap is
  // e^-1 = 0.3679 (standard error sqrt(0.368 x 0.632 / 200,000) = 0.0011). Philly's 1-GPU share
  // is 76,627 / 82,247 = 93.17 %; the mean exponential duration 3,600 s (standard error 0.22 %).
  GeneratorOptions options;
  options.jobs = 200000;
  options.cluster_gpus = 1000;
  options.load = 0.9;
  EXPECT_NEAR(PhillyMeanGpus(), 107235.0 / 82247, 1e-9);
  // sum of gpus x jobs: 76,627 + 3,636 + 7,480 + 13,144 + 84 + 3,184 + 168 + 2,144 + 384 + 384
  const std::string path = TempPath("poisson.csv");
  WriteSyntheticTrace(options, path);
  const Trace trace = LoadTrace(path);
  ASSERT_EQ(trace.jobs.size(), 200000u);
  const double mean_gap = trace.jobs.back().submit_time / (trace.jobs.size() - 1);
  int64_t longer = 0;
  for (size_t i = 1; i < trace.jobs.size(); ++i) {
    longer += trace.jobs[i].submit_time - trace.jobs[i - 1].submit_time > mean_gap;
  }
  EXPECT_NEAR(static_cast<double>(longer) / (trace.jobs.size() - 1), std::exp(-1.0), 0.005);
  int64_t one = 0;
  double duration = 0;
  for (const Job& job : trace.jobs) {
    one += job.gpus == 1;
    duration += job.duration;
  }
  EXPECT_NEAR(static_cast<double>(one) / trace.jobs.size(), 76627.0 / 82247, 0.003);
  EXPECT_NEAR(duration / trace.jobs.size() / 3600, 1.0, 0.01);
}

TEST(Generator, DiurnalArrivalsFollowTheCurve) {
  // A two-slot curve (10-minute slots): 1 then 3 submissions. So three quarters of the arrivals
  // fall in odd slots (over whole cycles; 40,000 jobs at load 0.9 on 100 GPUs with 1-hour jobs
  // span about 24 days, 3,500 cycles).
  const std::string curve = TempPath("curve.csv");
  std::ofstream(curve) << "time,submit_gpu_job\n2020-01-01 00:00:00,1\n2020-01-01 00:10:00,3\n";
  GeneratorOptions options;
  options.jobs = 40000;
  options.cluster_gpus = 100;
  options.arrivals = "diurnal";
  options.curve_path = curve;
  const std::string path = TempPath("diurnal.csv");
  WriteSyntheticTrace(options, path);
  const Trace trace = LoadTrace(path);
  int64_t odd = 0;
  for (const Job& job : trace.jobs) odd += static_cast<int64_t>(job.submit_time / 600) % 2;
  EXPECT_NEAR(static_cast<double>(odd) / trace.jobs.size(), 0.75, 0.01);
  EXPECT_EQ(trace.jobs.front().submit_time, 0);
}

// The issue's acceptance test: every arrival and duration option, loads 0.5, 0.9 and 1.2, five
// seeds each. The load is measured from the file read back as `trace stats` measures it: sum of
// GPUs x duration / (cluster GPUs x arrival span), the span from the first to the last
// submission. The generator sets the span from the jobs it drew, so the load is the target up to
// the file's 3 decimals, far inside the 1 % asked for.
TEST(Generator, OfferedLoadIsTheTargetWithinOnePercentForEveryOption) {
  for (const char* arrivals : {"poisson", "diurnal"}) {
    for (const char* durations : {"exponential", "philly"}) {
      for (const double target : {0.5, 0.9, 1.2}) {
        for (uint64_t seed = 1; seed <= 5; ++seed) {
          GeneratorOptions options;
          options.jobs = 5000;
          options.cluster_gpus = 512;
          options.load = target;
          options.arrivals = arrivals;
          options.durations = durations;
          options.seed = seed;
          const std::string path = TempPath("load.csv");
          const GeneratedTrace made = WriteSyntheticTrace(options, path);
          const Trace trace = LoadTrace(path);
          double gpu_seconds = 0;
          for (const Job& job : trace.jobs) gpu_seconds += job.gpus * job.duration;
          const double span = trace.jobs.back().submit_time - trace.jobs.front().submit_time;
          const double load = gpu_seconds / (512 * span);
          const std::string what = std::string(arrivals) + " " + durations + " load " +
                                   std::to_string(target) + " seed " + std::to_string(seed);
          EXPECT_NEAR(load / target, 1.0, 0.01) << what;
          EXPECT_NEAR(load / target, 1.0, 1e-6) << what << " (3 decimals)";
          // trace stats says the same, and so does the generator's own report.
          const TraceStats stats = ComputeTraceStats(trace);
          EXPECT_NEAR(stats.offered_gpu_hours_per_day / (24.0 * 512) / load, 1.0, 1e-9) << what;
          EXPECT_NEAR(made.offered_load / load, 1.0, 1e-6) << what;
          EXPECT_EQ(made.jobs, stats.jobs);
        }
      }
    }
  }
}

TEST(Generator, ModelMixAndPhillyDurations) {
  GeneratorOptions options;
  options.jobs = 20000;
  options.durations = "philly";
  options.models = ParseModelMix("resnet50:3,bert-large:1");
  const std::string path = TempPath("models.csv");
  WriteSyntheticTrace(options, path);
  const Trace trace = LoadTrace(path);
  int64_t resnet = 0;
  std::vector<double> durations;
  for (const Job& job : trace.jobs) {
    resnet += job.model == "resnet50";
    durations.push_back(job.duration);
  }
  EXPECT_NEAR(static_cast<double>(resnet) / trace.jobs.size(), 0.75, 0.015);
  // The Philly median duration is 1,144 s (its 50th percentile).
  EXPECT_NEAR(Percentile(durations, 0.5) / 1144, 1.0, 0.05);
  EXPECT_THROW(ParseModelMix("resnet50"), InputError);
  EXPECT_THROW(ParseModelMix("resnet50:-1"), InputError);
}

TEST(Generator, ModalWalltimesArePopularValuesAtLeastTheRunTime) {
  // The rounding by hand: 100 s x 1.5 = 150 s -> 5 min; 3,600 s x 1 = 1 h exactly -> 1 h;
  // 3,601 s -> 2 h; 20 h x 2 = 40 h -> 48 h; 50 h x 1 = 50 h -> 3 days (whole days beyond 48 h).
  EXPECT_EQ(ModalWalltimeSeconds(100, 1.5), 300);
  EXPECT_EQ(ModalWalltimeSeconds(3600, 1), 3600);
  EXPECT_EQ(ModalWalltimeSeconds(3601, 1), 7200);
  EXPECT_EQ(ModalWalltimeSeconds(20 * 3600, 2), 48 * 3600);
  EXPECT_EQ(ModalWalltimeSeconds(50 * 3600, 1), 3 * 86400);

  GeneratorOptions options;
  options.jobs = 20000;
  const std::string plain = TempPath("plain.csv");
  WriteSyntheticTrace(options, plain);
  options.walltimes = "modal";
  const std::string path = TempPath("walltimes.csv");
  WriteSyntheticTrace(options, path);
  const Trace with = LoadTrace(path);
  const Trace without = LoadTrace(plain);
  ASSERT_EQ(with.jobs.size(), without.jobs.size());
  const std::set<double> popular = {300,   600,   900,   1200,  1800,  3600,  7200,   10800,
                                    14400, 21600, 28800, 43200, 64800, 86400, 129600, 172800};
  double over = 0;
  for (size_t i = 0; i < with.jobs.size(); ++i) {
    const Job& job = with.jobs[i];
    // The wall time is drawn after everything else: the jobs are those of the plain trace.
    EXPECT_EQ(job.submit_time, without.jobs[i].submit_time);
    EXPECT_EQ(job.duration, without.jobs[i].duration);
    EXPECT_EQ(without.jobs[i].walltime, -1);
    ASSERT_GE(job.walltime, job.duration);  // never killed
    EXPECT_TRUE(popular.count(job.walltime) || std::fmod(job.walltime, 86400) == 0)
        << job.walltime;
    over += job.walltime / std::max(job.duration, 1.0);
  }
  // The factor before rounding averages 2; rounding up only adds to it.
  EXPECT_GT(over / with.jobs.size(), 2.0);
  options.walltimes = "always";
  EXPECT_THROW(WriteSyntheticTrace(options, TempPath("bad.csv")), InputError);
}

// --inflate (docs/workloads.md#inflation). Three jobs requesting 1000 + 500 + 2000 = 3500 milli.
Trace ThreeJobTrace() {
  Trace trace;
  trace.path = "t.csv";
  trace.jobs = {MakeJob("a", 0, 1, 10), MakeJob("b", 5, 1, 10), MakeJob("c", 9, 2, 10)};
  trace.jobs[1].gpu_milli = 500;
  trace.jobs[0].recorded_start = 3;
  return trace;
}

int64_t TotalMilli(const Trace& trace) {
  int64_t total = 0;
  for (const Job& job : trace.jobs) total += job.DemandMilli();
  return total;
}

TEST(InflateTrace, AddsDrawnCopiesUntilTheNextWouldPassTheTarget) {
  Trace trace = ThreeJobTrace();
  // 1.3 x 4000 = 5200 milli: copies add 1000, 500 or 2000 each. The draw that stops it would pass
  // 5200, so the total ends within the largest demand (2000) below the target.
  const size_t n = InflateTrace(&trace, 1.3, 4000, 42);
  EXPECT_EQ(n, trace.jobs.size());
  const int64_t total = TotalMilli(trace);
  EXPECT_LE(total, 5200);
  EXPECT_GT(total, 5200 - 2000);
  // The originals alone (3500) pass that lower bound; a target well above them needs copies:
  // 3 x 4000 = 12000, the total above 10000, so at least ceil((10000 - 3500) / 2000) = 4 copies.
  Trace big = ThreeJobTrace();
  InflateTrace(&big, 3.0, 4000, 42);
  EXPECT_LE(TotalMilli(big), 12000);
  EXPECT_GT(TotalMilli(big), 12000 - 2000);
  EXPECT_GE(big.jobs.size(), 3u + 4u);
  // The originals are all there once; the copies are numbered in draw order.
  std::map<std::string, int> originals;
  std::set<std::string> copies;
  for (const Job& job : trace.jobs) {
    const size_t at = job.id.find("-inflated-");
    if (at == std::string::npos) {
      ++originals[job.id];
    } else {
      copies.insert(job.id.substr(at + 10));
      EXPECT_TRUE(job.id.substr(0, at) == "a" || job.id.substr(0, at) == "b" ||
                  job.id.substr(0, at) == "c");
    }
  }
  EXPECT_EQ(originals, (std::map<std::string, int>{{"a", 1}, {"b", 1}, {"c", 1}}));
  for (size_t k = 0; k < copies.size(); ++k) EXPECT_TRUE(copies.count(std::to_string(k)));
  // The originals arrive first (in some order), then the copies in draw order.
  for (size_t i = 0; i < big.jobs.size(); ++i) {
    const bool copy = big.jobs[i].id.find("-inflated-") != std::string::npos;
    EXPECT_EQ(copy, i >= 3) << i;
    if (copy) {
      EXPECT_EQ(big.jobs[i].id.substr(big.jobs[i].id.find("-inflated-") + 10),
                std::to_string(i - 3));
    }
  }
  // Shuffled, one arrival a second, the recorded schedule dropped.
  for (size_t i = 0; i < trace.jobs.size(); ++i) {
    EXPECT_DOUBLE_EQ(trace.jobs[i].submit_time, static_cast<double>(i));
    EXPECT_FALSE(trace.jobs[i].has_recorded_start());
  }
}

TEST(InflateTrace, IsAFunctionOfTheSeed) {
  Trace a = ThreeJobTrace();
  Trace b = ThreeJobTrace();
  InflateTrace(&a, 3.0, 4000, 7);
  InflateTrace(&b, 3.0, 4000, 7);
  ASSERT_EQ(a.jobs.size(), b.jobs.size());
  for (size_t i = 0; i < a.jobs.size(); ++i) EXPECT_EQ(a.jobs[i].id, b.jobs[i].id);
  bool differs = false;
  for (int64_t seed = 8; seed < 12 && !differs; ++seed) {
    Trace c = ThreeJobTrace();
    InflateTrace(&c, 3.0, 4000, static_cast<uint64_t>(seed));
    differs = c.jobs.size() != a.jobs.size();
    for (size_t i = 0; !differs && i < a.jobs.size(); ++i) differs = c.jobs[i].id != a.jobs[i].id;
  }
  EXPECT_TRUE(differs);
}

TEST(InflateTrace, RemovesDrawnJobsWhenTheTraceAsksForMoreThanTheTarget) {
  Trace trace = ThreeJobTrace();
  InflateTrace(&trace, 0.5, 4000, 1);  // target 2000 of 3500
  EXPECT_LE(TotalMilli(trace), 2000);
  EXPECT_LT(trace.jobs.size(), 3u);
  for (const Job& job : trace.jobs) EXPECT_EQ(job.id.find("-inflated-"), std::string::npos);
}

TEST(InflateTrace, RefusesATraceWithoutGpuJobs) {
  Trace trace;
  trace.path = "cpu.csv";
  trace.jobs = {MakeJob("cpu", 0, 0, 10)};
  EXPECT_THROW(InflateTrace(&trace, 1.3, 4000, 1), InputError);
}

TEST(TraceSanity, RowsOutOfSubmissionOrderAreReportedOnlyForTheFilesOwnSubmitTimes) {
  // Lines 2, 3, 4 submitted at 0, 5, 3: line 4 is earlier than line 3 above it. With submit
  // times that are not the file's (--inflate: one arrival a second, shuffled), nothing to say.
  Trace trace;
  const double submits[] = {0, 5, 3};
  for (int i = 0; i < 3; ++i) {
    Job job = MakeJob("j" + std::to_string(i), submits[i], 1, 10);
    job.line = i + 2;
    trace.jobs.push_back(job);
  }
  const SanityReport file = CheckTraceSanity(trace, nullptr);
  ASSERT_EQ(file.items.size(), 1u);
  EXPECT_NE(file.items[0].what.find("submitted earlier"), std::string::npos) << file.items[0].what;
  EXPECT_EQ(file.items[0].first_lines, (std::vector<int64_t>{4}));
  EXPECT_TRUE(CheckTraceSanity(trace, nullptr, /*file_submissions=*/false).clean());
}

}  // namespace
}  // namespace clustersim
