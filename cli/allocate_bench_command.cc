#include "cli/allocate_bench_command.h"

#include <algorithm>
#include <boost/program_options.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "app/options.h"
#include "app/run.h"
#include "sim/alloc/batch_allocation.h"
#include "sim/alloc/bin_packing.h"
#include "sim/hardware/cluster.h"
#include "sim/util/error.h"
#include "sim/util/random.h"
#include "workloads/reader.h"

namespace po = boost::program_options;

namespace clustersim {
namespace {

// One allocator's results on one family of instances.
struct Tally {
  int instances = 0;
  int optimal = 0;
  double ratio_sum = 0;
  double worst = std::numeric_limits<double>::quiet_NaN();
  double seconds_sum = 0;
  double seconds_max = 0;
  void Add(double ratio, bool at_optimum, double seconds, bool minimize) {
    ++instances;
    optimal += at_optimum;
    ratio_sum += ratio;
    if (std::isnan(worst) || (minimize ? ratio > worst : ratio < worst)) worst = ratio;
    seconds_sum += seconds;
    seconds_max = std::max(seconds_max, seconds);
  }
};

template <typename F>
auto Timed(F&& f, double* seconds) {
  const auto start = std::chrono::steady_clock::now();
  auto result = f();
  *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

struct Settings {
  int instances = 50;
  int64_t seed = 1;
  int min_items = 8;
  int max_items = 16;
  GeneticOptions genetic;
  double time_limit = 10;
  std::string trace_path;
  std::string cluster = "default";
  std::string csv;
};

// Job sizes and durations drawn from a trace, and the cluster's nodes.
struct Source {
  std::vector<int> gpus;  // per job of the trace, > 0
  std::vector<int> node_gpus;  // per node: GPUs
  std::vector<int> node_group;  // per node: its partition (GPU type and size)
  int capacity = 8;  // GPUs per node of the most common node size
};

Source LoadSource(const Settings& s) {
  Source out;
  const std::string path = s.trace_path.empty() ? DefaultTracePath() : s.trace_path;
  const Trace trace = LoadTrace(path, "");
  const Cluster cluster(ClusterSpec::Load(s.cluster, HardwareCatalog::Default()),
                        HardwareCatalog::Default());
  std::map<int, int> sizes;
  std::map<std::pair<int, int>, int> groups;
  for (const Node& node : cluster.nodes()) {
    out.node_gpus.push_back(node.gpu_count);
    const auto key = std::make_pair(node.gpu_type, node.gpu_count);
    out.node_group.push_back(groups.emplace(key, static_cast<int>(groups.size())).first->second);
    ++sizes[node.gpu_count];
  }
  out.capacity = std::max_element(sizes.begin(), sizes.end(), [](auto a, auto b) {
                   return a.second < b.second;
                 })->first;
  for (const Job& job : trace.jobs) {
    if (job.gpus > 0) out.gpus.push_back(job.gpus);
  }
  if (out.gpus.empty()) throw InputError(path, 0, 0, "no job requests GPUs");
  return out;
}

// The instance families (docs/allocators.md#allocate-bench).
BinPacking RandomBins(std::mt19937_64& rng, const Settings& s) {
  BinPacking b;
  b.capacity = 10 + static_cast<int64_t>(UniformBelow(rng, 91));
  const int n = s.min_items + static_cast<int>(UniformBelow(rng, s.max_items - s.min_items + 1));
  for (int i = 0; i < n; ++i) {
    b.sizes.push_back(1 + static_cast<int64_t>(UniformBelow(rng, b.capacity)));
  }
  return b;
}

BinPacking TraceBins(std::mt19937_64& rng, const Settings& s, const Source& src) {
  BinPacking b;
  b.capacity = src.capacity;
  const int n = s.min_items + static_cast<int>(UniformBelow(rng, s.max_items - s.min_items + 1));
  while (static_cast<int>(b.sizes.size()) < n) {
    const int g = src.gpus[UniformBelow(rng, src.gpus.size())];
    if (g <= b.capacity) b.sizes.push_back(g);  // one-node jobs only: the bin-packing case
  }
  return b;
}

BatchInstance RandomBatch(std::mt19937_64& rng, const Settings& s) {
  auto uniform = [&](int lo, int hi) { return lo + static_cast<int>(UniformBelow(rng, hi - lo + 1)); };
  BatchInstance instance;
  const int nodes = uniform(3, 8);
  const int groups = uniform(1, 2);
  for (int i = 0; i < nodes; ++i) instance.nodes.push_back({uniform(0, 8), i % groups});
  const int jobs = uniform(s.min_items, s.max_items);
  for (int j = 0; j < jobs; ++j) {
    AllocJob job;
    job.gpus = uniform(1, 12);
    job.value = job.gpus * (0.5 + uniform(0, 1000) / 1000.0);
    if (uniform(0, 3) == 0) {
      job.limits.data_nodes = {uniform(0, nodes - 1)};
      job.limits.alpha = uniform(1, 4) / 4.0;
    }
    if (uniform(0, 3) == 0) job.limits.max_nodes = uniform(1, 2);
    instance.jobs.push_back(job);
  }
  return instance;
}

// A busy cluster: 2 to 6 of its nodes (drawn at random) with 1 to all of their GPUs free, the
// others full; and jobs drawn from the trace, valued at their GPUs x a factor uniform in
// [0.5, 1.5], on at most the fewest nodes their size needs (as node-aware placements take).
// `one_dimensional`: one group, no node limits.
BatchInstance TraceBatch(std::mt19937_64& rng, const Settings& s, const Source& src,
                         bool one_dimensional) {
  BatchInstance instance;
  const size_t nodes = src.node_gpus.size();
  const size_t with_free = std::min<size_t>(nodes, 2 + UniformBelow(rng, 5));
  std::vector<size_t> order(nodes);
  for (size_t i = 0; i < nodes; ++i) order[i] = i;
  for (size_t i = 0; i < with_free; ++i) std::swap(order[i], order[i + UniformBelow(rng, nodes - i)]);
  std::sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(with_free));
  for (size_t k = 0; k < with_free; ++k) {
    const size_t i = order[k];
    const int free = 1 + static_cast<int>(UniformBelow(rng, src.node_gpus[i]));
    instance.nodes.push_back({free, one_dimensional ? 0 : src.node_group[i]});
  }
  const int n = s.min_items + static_cast<int>(UniformBelow(rng, s.max_items - s.min_items + 1));
  for (int j = 0; j < n; ++j) {
    AllocJob job;
    job.gpus = src.gpus[UniformBelow(rng, src.gpus.size())];
    job.value = job.gpus * (0.5 + static_cast<double>(UniformBelow(rng, 1001)) / 1000.0);
    if (!one_dimensional) job.limits.max_nodes = (job.gpus + src.capacity - 1) / src.capacity;
    instance.jobs.push_back(job);
  }
  return instance;
}

struct Row {
  std::string family;
  std::string allocator;
  Tally tally;
  bool minimize = false;
};

void Print(const Settings& s, const std::vector<Row>& rows, int ffd_checked, int ffd_held,
           const std::map<std::string, int>& unsolved) {
  std::printf("clustersim allocate-bench: %d instances per family, seed %lld, %d to %d items, GA "
              "%d generations x %d\n",
              s.instances, static_cast<long long>(s.seed), s.min_items, s.max_items,
              s.genetic.generations, s.genetic.population);
  std::printf("  ratio = objective / optimum (bins: >= 1, lower is better; value: <= 1, higher "
              "is better)\n");
  std::printf("%-14s %-9s %9s %10s %11s %9s %12s %12s\n", "family", "allocator", "instances",
              "mean ratio", "worst ratio", "optimal", "mean time", "max time");
  for (const Row& r : rows) {
    const Tally& t = r.tally;
    if (t.instances == 0) continue;
    char optimal[32];
    std::snprintf(optimal, sizeof optimal, "%d/%d", t.optimal, t.instances);
    std::printf("%-14s %-9s %9d %10.4f %11.4f %9s %9.1f us %9.1f us\n", r.family.c_str(),
                r.allocator.c_str(), t.instances, t.ratio_sum / t.instances, t.worst, optimal,
                t.seconds_sum / t.instances * 1e6, t.seconds_max * 1e6);
  }
  std::printf("FFD <= 11/9 OPT + 6/9 (Dosa 2007): held on %d of %d bin-packing instances\n",
              ffd_held, ffd_checked);
  for (const auto& [family, count] : unsolved) {
    if (count > 0) {
      std::printf("%s: %d instances left out (the exact solver did not prove an optimum in %g s)\n",
                  family.c_str(), count, s.time_limit);
    }
  }
}

void WriteCsv(const std::string& path, const std::vector<Row>& rows) {
  std::ofstream out(path);
  if (!out) throw InputError(path, 0, 0, "cannot write file");
  out << "family,allocator,instances,mean_ratio,worst_ratio,optimal,mean_seconds,max_seconds\n";
  for (const Row& r : rows) {
    const Tally& t = r.tally;
    if (t.instances == 0) continue;
    out << r.family << ',' << r.allocator << ',' << t.instances << ','
        << t.ratio_sum / t.instances << ',' << t.worst << ',' << t.optimal << ','
        << t.seconds_sum / t.instances << ',' << t.seconds_max << '\n';
  }
  if (!out) throw InputError(path, 0, 0, "cannot write file");
}

}  // namespace

int CommandAllocateBench(int argc, char** argv) {
  Settings s;
  po::options_description desc(
      "clustersim allocate-bench: the batch allocators and bin packing against the exact optimum "
      "(docs/allocators.md)\n\noptions");
  desc.add_options()("help,h", "show this help")(
      "instances", po::value(&s.instances)->default_value(50), "instances per family, >= 1")(
      "seed", po::value(&s.seed)->default_value(1), "random seed of the instances and the GA")(
      "min-items", po::value(&s.min_items)->default_value(8), "items (jobs) per instance, at least")(
      "max-items", po::value(&s.max_items)->default_value(16),
      "items per instance, at most (bin packing's DP takes at most 20)")(
      "generations", po::value(&s.genetic.generations)->default_value(60), "GA generations")(
      "population", po::value(&s.genetic.population)->default_value(40), "GA population, >= 2")(
      "time-limit", po::value(&s.time_limit)->default_value(10), "seconds per exact solve")(
      "trace", po::value(&s.trace_path),
      "trace the job sizes are drawn from (default: the bundled Philly window)")(
      "cluster", po::value(&s.cluster)->default_value("default"),
      "cluster whose nodes the trace-drawn batches use")(
      "csv", po::value(&s.csv), "also write the table as CSV to this file");
  po::variables_map vm;
  if (!ParseOptions(argc, argv, desc, &vm)) return 0;
  if (s.instances < 1 || s.instances > 100000) throw InputError("--instances: expected 1 to 100000");
  if (s.min_items < 1 || s.max_items < s.min_items || s.max_items > kMaxDpItems) {
    throw InputError("--min-items, --max-items: expected 1 <= min <= max <= " +
                     std::to_string(kMaxDpItems));
  }
  if (s.genetic.generations < 0 || s.genetic.population < 2) {
    throw InputError("--generations >= 0 and --population >= 2 expected");
  }
  if (!(s.time_limit > 0)) throw InputError("--time-limit: expected seconds > 0");
  s.genetic.seed = static_cast<uint64_t>(s.seed);
  const Source src = LoadSource(s);

  std::vector<Row> rows;
  auto row = [&](const std::string& family, const std::string& allocator,
                 bool minimize) -> Tally& {
    for (Row& r : rows) {
      if (r.family == family && r.allocator == allocator) return r.tally;
    }
    rows.push_back({family, allocator, {}, minimize});
    return rows.back().tally;
  };
  std::map<std::string, int> unsolved;
  int ffd_checked = 0;
  int ffd_held = 0;
  std::mt19937_64 rng(static_cast<uint64_t>(s.seed));

  // Bin packing: fewest bins.
  for (const char* family : {"bins-random", "bins-trace"}) {
    const bool trace = std::string(family) == "bins-trace";
    for (int k = 0; k < s.instances; ++k) {
      const BinPacking b = trace ? TraceBins(rng, s, src) : RandomBins(rng, s);
      double t_exact = 0;
      const auto exact = Timed([&] { return ExactBinPackingIlp(b, s.time_limit); }, &t_exact);
      if (!exact) {
        ++unsolved[family];
        continue;
      }
      const double opt = exact->bins;
      row(family, "exact", true).Add(1.0, true, t_exact, true);
      auto add = [&](const char* name, const Packing& p, double seconds) {
        row(family, name, true).Add(p.bins / opt, p.bins == exact->bins, seconds, true);
      };
      double t = 0;
      const Packing ff = Timed([&] { return FirstFit(b); }, &t);
      add("ff", ff, t);
      const Packing ffd = Timed([&] { return FirstFitDecreasing(b); }, &t);
      add("ffd", ffd, t);
      ++ffd_checked;
      ffd_held += ffd.bins <= FfdBound(exact->bins);
      const Packing ga = Timed([&] { return GeneticBinPacking(b, s.genetic); }, &t);
      add("ga", ga, t);
      const auto dp = Timed([&] { return ExactBinPackingDp(b); }, &t);
      if (dp) add("dp", *dp, t);
    }
  }
  // Batch allocation: most value.
  for (const char* family : {"batch-random", "batch-trace", "batch-1d"}) {
    const std::string f = family;
    for (int k = 0; k < s.instances; ++k) {
      const BatchInstance instance = f == "batch-random" ? RandomBatch(rng, s)
                                                         : TraceBatch(rng, s, src, f == "batch-1d");
      double t_exact = 0;
      const auto exact = Timed([&] { return ExactAllocate(instance, s.time_limit); }, &t_exact);
      if (!exact) {
        ++unsolved[family];
        continue;
      }
      const double opt = exact->value;
      auto add = [&](const char* name, const BatchSolution& sol, double seconds) {
        CHECK(CheckBatchSolution(instance, sol).empty(),
              "allocate-bench: an allocator returned an infeasible solution");
        const double ratio = opt > 0 ? sol.value / opt : 1.0;
        row(family, name, false).Add(ratio, sol.value >= opt - 1e-9 * std::max(1.0, opt),
                                     seconds, false);
      };
      add("exact", *exact, t_exact);
      double t = 0;
      const BatchSolution greedy = Timed([&] { return GreedyAllocate(instance); }, &t);
      add("greedy", greedy, t);
      const BatchSolution ga = Timed([&] { return GeneticAllocate(instance, s.genetic); }, &t);
      add("ga", ga, t);
      if (IsOneDimensional(instance)) {
        const auto dp = Timed([&] { return DpAllocate(instance); }, &t);
        add("dp", *dp, t);
      }
    }
  }
  Print(s, rows, ffd_checked, ffd_held, unsolved);
  if (!s.csv.empty()) WriteCsv(s.csv, rows);
  return 0;
}

}  // namespace clustersim
