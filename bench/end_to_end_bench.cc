// end_to_end_bench: the performance targets of bench/README.md, measured with Google Benchmark on
// seeded synthetic traces (workloads/generator.h: 1,000,000 jobs, Philly GPU counts, offered
// load 0.9 on the cluster the case runs on unless named otherwise, mean duration 1 h).
//
// What it measures:
//   EndToEnd/fcfs_first_fit_1024x8   ExecuteRun as `clustersim run` does it: parse the trace,
//                                    simulate fcfs + first-fit with the trace runtime model on
//                                    1,024 nodes x 8 GPUs, write the SQLite database.
//                                    Target: <= 3 s wall, peak RSS <= 1 GB.
//   EndToEnd/fcfs_first_fit_100k     The same on 12,500 nodes x 8 = 100,000 GPUs (trace at load
//                                    0.9 on 100,000 GPUs). Target: <= 10 s.
//   EndToEnd/fcfs_pool_1024x8        The same as the first with pool placement.
//   EngineOnly/fcfs_first_fit_1024x8 Engine::Run alone: trace parsed and cluster built before
//                                    the clock starts, no summary, no SQLite.
//                                    Target: >= 5 million events/s.
//   EngineOnly/..._1024x8_overload   The same on a trace at offered load 1.2: the fcfs queue
//                                    grows to a large fraction of the trace (at load 0.9 jobs
//                                    almost never wait, so the queue paths are barely used).
//   EngineOnly/..._no_wait_reasons   The two above with EngineOptions::wait_reasons off: the
//                                    cost of wait reasons (docs/metrics.md#wait-reasons) is the
//                                    difference.
//   EngineOnly/easy_first_fit_1024x8_overload[_no_wait_reasons]  easy on the overloaded trace,
//                                    with and without wait reasons: the backfill scan states
//                                    reasons for the jobs it examines and sets its classes'.
//   Phases/fcfs_first_fit_1024x8     The steps of ExecuteRun timed one by one (setup = catalog,
//   Phases/fcfs_first_fit_100k       cluster, topology, runtime model, placement; trace parse;
//                                    SQLite open + engine construction + BeginRun; Engine::Run,
//                                    with the rows handed to the writer thread as in ExecuteRun;
//                                    summary = the rows not yet handed over, handed while the
//                                    summary is computed on another thread (WriteLastRows, as in
//                                    ExecuteRun);
//                                    SQLite = waiting for the writer thread to finish, summary
//                                    rows, commit; teardown = freeing the trace and engine), to
//                                    show where the end-to-end time goes.
//                                    cpu_s and main_cpu_s: CPU time of the process and of the
//                                    main thread (the rest is the writer thread's and the hash's).
//
// Counters: jobs, events, wall_s (per iteration), jobs_per_s and events_per_s (from wall time),
// peak_rss_mb (getrusage ru_maxrss of the whole process: run one case per process for a clean
// figure, as bench/run_benchmarks.sh does). The label is the run fingerprint.
//
// Traces are generated once and cached in $CLUSTERSIM_BENCH_DATA (default build/bench-data);
// cluster specs and databases go to a temporary folder removed at exit. $CLUSTERSIM_BENCH_JOBS
// overrides the job count (e.g. 10000 for a smoke run).
#include <benchmark/benchmark.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "app/run.h"
#include "policies/registry.h"
#include "sim/engine/summary.h"
#include "sim/hardware/topology.h"
#include "sim/output/sqlite_writer.h"
#include "sim/util/sha256.h"
#include "workloads/generator.h"
#include "workloads/reader.h"

#ifndef CLUSTERSIM_BENCH_DATA_DIR
#define CLUSTERSIM_BENCH_DATA_DIR "bench-data"
#endif

namespace clustersim {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr int kGpusPerNode = 8;
constexpr double kLoad = 0.9;      // jobs almost never wait at this load
constexpr double kOverload = 1.2;  // the queue grows through the whole trace
constexpr uint64_t kSeed = 42;

// CPU seconds (user + system) of the process (RUSAGE_SELF) or of the calling thread
// (RUSAGE_THREAD).
double CpuSeconds(int who) {
  rusage usage{};
  getrusage(who, &usage);
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec * 1e-6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double PeakRssMib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

int64_t JobCount() {
  if (const char* jobs = std::getenv("CLUSTERSIM_BENCH_JOBS")) return std::atoll(jobs);
  return 1'000'000;
}

fs::path DataDir() {
  if (const char* dir = std::getenv("CLUSTERSIM_BENCH_DATA")) return dir;
  return CLUSTERSIM_BENCH_DATA_DIR;
}

// A per-process scratch folder for cluster specs and databases.
const fs::path& ScratchDir() {
  static const fs::path dir = [] {
    fs::path d = fs::temp_directory_path() / ("clustersim-bench-" + std::to_string(getpid()));
    fs::create_directories(d);
    return d;
  }();
  return dir;
}

// Returns the cached synthetic trace for `gpus` at offered `load`, generating it on first use.
std::string TracePath(int64_t gpus, double load = kLoad) {
  GeneratorOptions options;
  options.jobs = JobCount();
  options.cluster_gpus = gpus;
  options.load = load;
  options.seed = kSeed;
  char load_text[32];
  std::snprintf(load_text, sizeof load_text, "%g", load);
  const fs::path path =
      DataDir() / ("synthetic_" + std::to_string(options.jobs) + "jobs_" + std::to_string(gpus) +
                   "gpus_load" + load_text + "_seed42.csv");
  if (!fs::exists(path)) {
    fs::create_directories(path.parent_path());
    WriteSyntheticTrace(options, path.string());
  }
  return path.string();
}

std::string ClusterPath(int nodes) {
  const fs::path path = ScratchDir() / ("cluster_" + std::to_string(nodes) + "x8.json");
  if (!fs::exists(path)) {
    std::ofstream(path) << R"({"nodes":[{"count":)" << nodes
                        << R"(,"gpu_type":"A100-80GB","gpus_per_node":8}]})" << '\n';
  }
  return path.string();
}

void RemoveDatabase(const fs::path& path) {
  std::error_code ignored;
  for (const char* suffix : {"", "-journal", "-wal", "-shm"}) {
    fs::remove(path.string() + suffix, ignored);
  }
}

void SetRunCounters(benchmark::State& state, double jobs, double events, double wall_seconds,
                    double iterations) {
  state.counters["jobs"] = jobs;
  state.counters["events"] = events;
  state.counters["wall_s"] = wall_seconds / iterations;
  state.counters["jobs_per_s"] = jobs * iterations / wall_seconds;
  state.counters["events_per_s"] = events * iterations / wall_seconds;
  state.counters["peak_rss_mb"] = PeakRssMib();
}

// End to end through ExecuteRun, as `clustersim run ... --out FILE` does.
void EndToEnd(benchmark::State& state, int nodes, const char* placement) {
  RunConfig config;
  config.trace_path = TracePath(int64_t{nodes} * kGpusPerNode);
  config.cluster = ClusterPath(nodes);
  config.policy = "fcfs";
  config.placement = placement;
  config.runtime_model = "trace";
  const fs::path out = ScratchDir() / "end_to_end.sqlite";
  config.out = out.string();
  RunOutcome outcome;
  double total_seconds = 0;
  for (auto _ : state) {
    RemoveDatabase(out);
    const auto start = Clock::now();
    outcome = ExecuteRun(config);
    const double seconds = SecondsSince(start);
    state.SetIterationTime(seconds);
    total_seconds += seconds;
    if (outcome.status != RunStatus::kComplete) state.SkipWithError("run did not complete");
  }
  RemoveDatabase(out);
  SetRunCounters(state, static_cast<double>(outcome.jobs), static_cast<double>(outcome.events),
                 total_seconds, static_cast<double>(state.iterations()));
  state.SetLabel(HexFingerprint(outcome.fingerprint));
}

// What ExecuteRun builds before the engine, built once outside the timed region.
struct Setup {
  const HardwareCatalog& catalog = HardwareCatalog::Default();
  Params params;  // before `placement`, which is made with it (members initialize in this order)
  Cluster cluster;
  Topology topology;
  std::unique_ptr<RuntimeModel> runtime;
  std::unique_ptr<Placement> placement;

  Setup(int nodes, const std::string& placement_name)
      : cluster(ClusterSpec::Load(ClusterPath(nodes), catalog), catalog),
        topology(cluster),
        runtime(MakeRuntimeModel("trace", cluster, topology)),
        placement(FindPlacement(placement_name)
                      .make(PlacementEnv{&cluster, &topology, runtime.get()}, params)) {}
};

// Engine::Run alone on a pre-loaded trace; engine construction is timed apart (construct_s).
void EngineOnly(benchmark::State& state, int nodes, const char* placement, double load,
                const char* policy_name = "fcfs", bool wait_reasons = true) {
  const Setup setup(nodes, placement);
  const Trace trace = LoadTrace(TracePath(int64_t{nodes} * kGpusPerNode, load));
  const PolicyEntry& policy_entry = FindPolicy(policy_name);
  EngineOptions options;
  options.wait_reasons = wait_reasons;
  uint64_t events = 0;
  uint64_t fingerprint = 0;
  double run_seconds = 0;
  double construct_seconds = 0;
  for (auto _ : state) {
    const auto policy = policy_entry.make(setup.params);
    const auto construct_start = Clock::now();
    Engine engine(trace, setup.cluster, *setup.placement, *setup.runtime, *policy, policy_name,
                  options);
    construct_seconds += SecondsSince(construct_start);
    const auto start = Clock::now();
    engine.Run();
    const double seconds = SecondsSince(start);
    state.SetIterationTime(seconds);
    run_seconds += seconds;
    events = engine.events_processed();
    fingerprint = engine.fingerprint();
  }
  const double iterations = static_cast<double>(state.iterations());
  SetRunCounters(state, static_cast<double>(trace.jobs.size()), static_cast<double>(events),
                 run_seconds, iterations);
  state.counters["construct_s"] = construct_seconds / iterations;
  state.SetLabel(HexFingerprint(fingerprint));
}

// ExecuteRun's steps timed one by one (same order and calls as app/run.cc).
void Phases(benchmark::State& state, int nodes, const char* placement) {
  const std::string trace_path = TracePath(int64_t{nodes} * kGpusPerNode);
  const fs::path out = ScratchDir() / "phases.sqlite";
  double setup_s = 0, parse_s = 0, construct_s = 0, run_s = 0, summary_s = 0, sqlite_s = 0;
  double total_s = 0;
  size_t jobs = 0;
  uint64_t events = 0;
  uint64_t fingerprint = 0;
  double teardown_s = 0;
  double cpu_s = 0;
  double main_cpu_s = 0;
  // Returns when the database is committed; its locals (trace, engine, writer) are destroyed on
  // return, as at the end of ExecuteRun, and that teardown is timed too.
  auto run_once = [&]() -> Clock::time_point {
    auto t = Clock::now();
    const Setup setup(nodes, placement);
    const auto policy = FindPolicy("fcfs").make(setup.params);
    setup_s += SecondsSince(t);

    t = Clock::now();
    const Trace trace = LoadTrace(trace_path);
    parse_s += SecondsSince(t);

    t = Clock::now();
    SqliteWriter writer(out.string());
    RunRecord record;
    record.trace_path = trace_path;
    record.trace_sha256 = trace.sha256;
    record.trace_format = trace.format;
    record.cluster_spec = setup.cluster.spec().origin;
    record.cluster_sha256 = Sha256Hex(setup.cluster.spec().text);
    record.cluster_json = setup.cluster.spec().text;
    record.policy = "fcfs";
    record.placement = placement;
    record.params_json = setup.params.ToJson();
    record.runtime_model = "trace";
    record.timeseries_interval_seconds = EngineOptions{}.timeseries_interval_seconds;
    EngineOptions options;
    options.observe = [&writer](const Engine& e) { writer.WriteFinished(e, false); };
    Engine engine(trace, setup.cluster, *setup.placement, *setup.runtime, *policy, "fcfs", options);
    writer.BeginRun(record, engine);
    construct_s += SecondsSince(t);

    t = Clock::now();
    engine.Run();
    run_s += SecondsSince(t);

    t = Clock::now();
    const std::vector<SummaryRow> summary = writer.WriteLastRows(engine, SummaryOptions{});
    summary_s += SecondsSince(t);

    t = Clock::now();
    record.events = engine.events_processed();
    record.passes = engine.passes();
    record.status = "complete";
    record.fingerprint = HexFingerprint(engine.fingerprint());
    writer.EndRun(record, summary);
    writer.Commit();
    sqlite_s += SecondsSince(t);

    jobs = trace.jobs.size();
    events = engine.events_processed();
    fingerprint = engine.fingerprint();
    return Clock::now();
  };
  for (auto _ : state) {
    RemoveDatabase(out);
    const auto start = Clock::now();
    const double cpu_start = CpuSeconds(RUSAGE_SELF);
    const double main_cpu_start = CpuSeconds(RUSAGE_THREAD);
    const auto teardown_start = run_once();
    teardown_s += SecondsSince(teardown_start);
    cpu_s += CpuSeconds(RUSAGE_SELF) - cpu_start;
    main_cpu_s += CpuSeconds(RUSAGE_THREAD) - main_cpu_start;
    const double seconds = SecondsSince(start);
    state.SetIterationTime(seconds);
    total_s += seconds;
  }
  RemoveDatabase(out);
  const double iterations = static_cast<double>(state.iterations());
  SetRunCounters(state, static_cast<double>(jobs), static_cast<double>(events), total_s,
                 iterations);
  state.counters["setup_s"] = setup_s / iterations;
  state.counters["parse_s"] = parse_s / iterations;
  state.counters["construct_s"] = construct_s / iterations;
  state.counters["run_s"] = run_s / iterations;
  state.counters["summary_s"] = summary_s / iterations;
  state.counters["sqlite_s"] = sqlite_s / iterations;
  state.counters["teardown_s"] = teardown_s / iterations;
  // CPU time of the whole process and of the thread running ExecuteRun's steps; the difference
  // is the other threads' (the SQLite writer thread, the trace hash).
  state.counters["cpu_s"] = cpu_s / iterations;
  state.counters["main_cpu_s"] = main_cpu_s / iterations;
  state.SetLabel(HexFingerprint(fingerprint));
}

BENCHMARK_CAPTURE(EndToEnd, fcfs_first_fit_1024x8, 1024, "first-fit")
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(EndToEnd, fcfs_first_fit_100k, 12500, "first-fit")
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(EndToEnd, fcfs_pool_1024x8, 1024, "pool")
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(EngineOnly, fcfs_first_fit_1024x8, 1024, "first-fit", kLoad)
    ->Iterations(3)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(EngineOnly, fcfs_first_fit_1024x8_overload, 1024, "first-fit", kOverload)
    ->Iterations(3)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(EngineOnly, fcfs_first_fit_1024x8_no_wait_reasons, 1024, "first-fit", kLoad,
                  "fcfs", false)
    ->Iterations(3)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(EngineOnly, fcfs_first_fit_1024x8_overload_no_wait_reasons, 1024, "first-fit",
                  kOverload, "fcfs", false)
    ->Iterations(3)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(EngineOnly, easy_first_fit_1024x8_overload, 1024, "first-fit", kOverload, "easy",
                  true)
    ->Iterations(3)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(EngineOnly, easy_first_fit_1024x8_overload_no_wait_reasons, 1024, "first-fit",
                  kOverload, "easy", false)
    ->Iterations(3)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(Phases, fcfs_first_fit_1024x8, 1024, "first-fit")
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(Phases, fcfs_first_fit_100k, 12500, "first-fit")
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace clustersim

int main(int argc, char** argv) {
  spdlog::set_level(spdlog::level::warn);  // ExecuteRun logs progress at info
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  int status = 0;
  try {
    benchmark::RunSpecifiedBenchmarks();
  } catch (const std::exception& error) {
    std::fprintf(stderr, "end_to_end_bench: %s\n", error.what());
    status = 1;
  }
  benchmark::Shutdown();
  std::error_code ignored;
  std::filesystem::remove_all(clustersim::ScratchDir(), ignored);
  return status;
}
