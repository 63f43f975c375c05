#include "cli/plan_command.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/program_options.hpp>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "app/options.h"
#include "app/param_scopes.h"
#include "app/progress.h"
#include "app/replay_options.h"
#include "app/run.h"
#include "policies/registry.h"
#include "sim/alloc/bin_packing.h"
#include "sim/engine/runtime_model.h"
#include "sim/models/queueing.h"
#include "sim/util/duration.h"
#include "sim/util/error.h"
#include "sim/util/output_path.h"
#include "sim/util/suggest.h"
#include "sim/util/temporary_files.h"
#include "workloads/reader.h"

namespace po = boost::program_options;

namespace clustersim {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Tunable limits of the search, each overridable on the command line.
constexpr int kDefaultMaxNodes = 1024;  // per node type; the upward doubling stops here
constexpr int kDefaultMixSteps = 4;     // grid steps per non-last type in the mix search
constexpr int kDefaultMaxEvals = 200;   // simulations in all; the search stops (reported) there
constexpr int kMaxGpusPerNode = 1024;

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// ---------------------------------------------------------------------------------------------
// Node types.

struct NodeKind {
  std::string label;  // "A100-80GBx8" or a preset name
  NodeGroupSpec group;
  NetworkSpec network;
  double price_per_gpu_hour = 0;
  double NodeCostPerHour() const { return price_per_gpu_hour * group.gpus_per_node; }
};

const char* kNodeTypeSyntax =
    "expected GPUTYPExGPUS_PER_NODE (a catalog GPU type, e.g. A100-80GBx8 or V100-32GBx1) or a "
    "one-type preset (dgx1-v100, dgx-a100, dgx-h100, pcie-v100)";

NodeKind ParseNodeKind(const std::string& text, const HardwareCatalog& catalog) {
  const std::string where = "--node-type \"" + text + "\"";
  NodeKind kind;
  for (const std::string& name : ClusterSpec::PresetNames()) {
    if (Lower(name) != Lower(text)) continue;
    const ClusterSpec spec = ClusterSpec::Load(name, catalog);
    if (spec.groups.size() != 1) {
      throw InputError(where + ": preset " + name + " mixes node groups; " + kNodeTypeSyntax);
    }
    kind.label = name;
    kind.group = spec.groups[0];
    kind.network = spec.network;
    kind.price_per_gpu_hour = catalog.gpu(*catalog.Find(kind.group.gpu_type)).price_per_gpu_hour;
    return kind;
  }
  const size_t x = text.find_last_of("xX");
  if (x == std::string::npos || x == 0 || x + 1 == text.size()) {
    throw InputError(where + ": " + kNodeTypeSyntax);
  }
  const std::string type_text = text.substr(0, x);
  const std::string count_text = text.substr(x + 1);
  if (count_text.size() > 5 ||
      !std::all_of(count_text.begin(), count_text.end(), [](char c) { return std::isdigit(c); })) {
    throw InputError(where + ": \"" + count_text + "\" is not a GPU count; " + kNodeTypeSyntax);
  }
  const int gpus = std::stoi(count_text);
  if (gpus < 1 || gpus > kMaxGpusPerNode) {
    throw InputError(where + ": GPUs per node must be 1 to " + std::to_string(kMaxGpusPerNode));
  }
  const GpuSpec* gpu = nullptr;
  for (const GpuSpec& g : catalog.gpus()) {
    if (Lower(g.name) == Lower(type_text)) gpu = &g;
  }
  if (gpu == nullptr) {
    throw InputError(where + ": unknown GPU type \"" + type_text +
                     "\"; valid: " + catalog.NameList());
  }
  // Through the spec parser, so the node gets the same default topology and NIC as a spec file.
  const ClusterSpec spec =
      ClusterSpec::FromJsonText(R"({"nodes":[{"count":1,"gpu_type":")" + gpu->name +
                                    R"(","gpus_per_node":)" + std::to_string(gpus) + "}]}",
                                where, catalog);
  kind.label = gpu->name + "x" + std::to_string(gpus);
  kind.group = spec.groups[0];
  kind.network = spec.network;
  kind.price_per_gpu_hour = gpu->price_per_gpu_hour;
  return kind;
}

// "--price KEY=USD": KEY is a node type's label or GPU type; USD per GPU-hour.
void ApplyPrice(const std::string& text, std::vector<NodeKind>* kinds) {
  const size_t eq = text.find('=');
  const std::string where = "--price \"" + text + "\"";
  if (eq == std::string::npos || eq == 0) {
    throw InputError(where + ": expected NODE_OR_GPU_TYPE=USD_PER_GPU_HOUR, e.g. A100-80GB=3.5");
  }
  const std::string key = Lower(text.substr(0, eq));
  char* end = nullptr;
  const std::string value = text.substr(eq + 1);
  const double usd = std::strtod(value.c_str(), &end);
  if (value.empty() || *end != '\0' || !(usd >= 0) || !std::isfinite(usd)) {
    throw InputError(where + ": expected a price >= 0 in USD per GPU-hour after '='");
  }
  bool matched = false;
  for (NodeKind& kind : *kinds) {
    if (Lower(kind.label) == key || Lower(kind.group.gpu_type) == key) {
      kind.price_per_gpu_hour = usd;
      matched = true;
    }
  }
  if (!matched) throw InputError(where + ": no --node-type has this name or GPU type");
}

// ---------------------------------------------------------------------------------------------
// SLO conditions.

enum class Unit { kSeconds, kFraction, kPlain };

struct SloMetric {
  const char* name;
  const char* summary_metric;
  Unit unit;
};

constexpr SloMetric kSloMetrics[] = {
    {"mean_wait", "wait_seconds_mean", Unit::kSeconds},
    {"p50_wait", "wait_seconds_p50", Unit::kSeconds},
    {"p95_wait", "wait_seconds_p95", Unit::kSeconds},
    {"p99_wait", "wait_seconds_p99", Unit::kSeconds},
    {"max_wait", "wait_seconds_max", Unit::kSeconds},
    {"mean_jct", "jct_seconds_mean", Unit::kSeconds},
    {"p50_jct", "jct_seconds_p50", Unit::kSeconds},
    {"p95_jct", "jct_seconds_p95", Unit::kSeconds},
    {"p99_jct", "jct_seconds_p99", Unit::kSeconds},
    {"mean_slowdown", "slowdown_mean", Unit::kPlain},
    {"p95_slowdown", "slowdown_p95", Unit::kPlain},
    {"p99_slowdown", "slowdown_p99", Unit::kPlain},
    {"queue_length", "queue_length_mean", Unit::kPlain},
    {"utilization", "gpu_utilization", Unit::kFraction},
};

struct SloCondition {
  std::string text;  // as given
  SloMetric metric;
  bool at_most = true;  // "<=": a capacity condition; ">=": gets worse with more nodes
  double bound = 0;     // seconds, fraction or plain number

  // NaN (e.g. no job started) never holds.
  bool Holds(double value) const { return at_most ? value <= bound : value >= bound; }
};

std::string SloNames() {
  std::string names;
  for (const SloMetric& m : kSloMetrics) names += (names.empty() ? "" : ", ") + std::string(m.name);
  return names;
}

std::string FormatPercent(double fraction) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g %%", 100 * fraction);
  return buffer;
}

std::string FormatNumber(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", value);
  return buffer;
}

SloCondition ParseSlo(const std::string& text) {
  const std::string where = "--slo \"" + text + "\"";
  SloCondition slo;
  slo.text = text;
  size_t op = text.find("<=");
  if (op == std::string::npos) {
    op = text.find(">=");
    slo.at_most = false;
  }
  if (op == std::string::npos || op == 0) {
    throw InputError(where +
                     ": expected METRIC<=VALUE or METRIC>=VALUE, e.g. p95_wait<=3600 or "
                     "utilization>=0.6; metrics: " +
                     SloNames());
  }
  const std::string name = Lower(text.substr(0, op));
  const SloMetric* metric = nullptr;
  for (const SloMetric& m : kSloMetrics) {
    if (name == m.name) metric = &m;
  }
  if (metric == nullptr) {
    std::vector<std::string> names;
    for (const SloMetric& m : kSloMetrics) names.push_back(m.name);
    throw InputError(where + ": unknown metric \"" + name + "\"" + DidYouMean(name, names) +
                     "; valid: " + SloNames());
  }
  slo.metric = *metric;
  const std::string value = text.substr(op + 2);
  char* end = nullptr;
  double number = std::strtod(value.c_str(), &end);
  const std::string suffix = Lower(end);
  if (value.empty() || end == value.c_str() || !std::isfinite(number)) {
    throw InputError(where + ": expected a number after the comparison");
  }
  double scale = 0;
  if (metric->unit == Unit::kSeconds) {
    // The duration syntax of every time option (sim/util/duration.h).
    std::string error;
    if (!TryParseDuration(value, 1, &number, &error)) throw InputError(where + ": " + error);
    scale = 1;
  } else if (metric->unit == Unit::kFraction) {
    if (suffix.empty()) scale = 1;
    if (suffix == "%") scale = 0.01;
    if (scale == 0) throw InputError(where + ": expected a fraction (0.6) or a percentage (60%)");
  } else {
    if (!suffix.empty())
      throw InputError(where + ": unexpected \"" + suffix + "\" after the number");
    scale = 1;
  }
  slo.bound = number * scale;
  if (slo.bound < 0) throw InputError(where + ": expected a value >= 0");
  // Conditions no cluster can meet, refused before any simulation.
  const std::string metric_name = metric->name;
  if (metric_name == "utilization" && slo.bound > 1 && !slo.at_most) {
    throw InputError(where +
                     ": utilization is busy GPU-time over all GPU-time, at most 100 %, so " +
                     "no cluster reaches " + FormatPercent(slo.bound));
  }
  if (metric_name.ends_with("_slowdown") && slo.bound < 1 && slo.at_most) {
    throw InputError(where + ": a slowdown (JCT / run time) is at least 1, so no cluster meets " +
                     metric_name + " <= " + FormatNumber(slo.bound));
  }
  return slo;
}

// The families of SLO metrics whose values are ordered whatever the schedule: within each list
// every metric is at most the next (a quantile never exceeds a higher one or the maximum; a mean
// never exceeds the maximum).
constexpr const char* kOrderedMetrics[][2] = {
    {"p50_wait", "p95_wait"},  {"p50_wait", "p99_wait"},        {"p50_wait", "max_wait"},
    {"p95_wait", "p99_wait"},  {"p95_wait", "max_wait"},        {"p99_wait", "max_wait"},
    {"mean_wait", "max_wait"}, {"p50_jct", "p95_jct"},          {"p50_jct", "p99_jct"},
    {"p95_jct", "p99_jct"},    {"p95_slowdown", "p99_slowdown"}};

// Throws InputError for two conditions that contradict each other: the same metric bounded
// below above its bound from above, or a metric bounded below above the upper bound of one it
// never exceeds (p50_wait>=2h with p95_wait<=1h).
void CheckSloConsistency(const std::vector<SloCondition>& slos) {
  auto at_most_one_above = [](const std::string& low, const std::string& high) {
    if (low == high) return true;
    for (const auto& pair : kOrderedMetrics) {
      if (low == pair[0] && high == pair[1]) return true;
    }
    return false;
  };
  for (const SloCondition& below : slos) {
    if (below.at_most) continue;
    for (const SloCondition& above : slos) {
      if (!above.at_most) continue;
      if (!at_most_one_above(below.metric.name, above.metric.name)) continue;
      if (below.bound > above.bound) {
        throw InputError("--slo \"" + below.text + "\" and --slo \"" + above.text +
                         "\" contradict each other: " + std::string(below.metric.name) +
                         (std::string(below.metric.name) == above.metric.name
                              ? ""
                              : " is never above " + std::string(above.metric.name)) +
                         ", so no cluster meets both");
      }
    }
  }
}

std::string FormatValue(Unit unit, double value) {
  char buffer[32];
  if (std::isnan(value)) return "-";
  switch (unit) {
    case Unit::kSeconds:
      std::snprintf(buffer, sizeof buffer, value >= 100 ? "%.0f" : "%.1f", value);
      break;
    case Unit::kFraction:
      std::snprintf(buffer, sizeof buffer, "%.3f", value);
      break;
    case Unit::kPlain:
      std::snprintf(buffer, sizeof buffer, "%.2f", value);
      break;
  }
  return buffer;
}

std::string ColumnName(const SloMetric& m) {
  return std::string(m.name) + (m.unit == Unit::kSeconds ? "(s)" : "");
}

// ---------------------------------------------------------------------------------------------
// The Erlang C starting point (plan_command.h explains the mapping).

struct Workload {
  int64_t jobs = 0;
  int max_gpus = 0;
  double span_seconds = 0;
  double gpus_requested = 0;  // sum over jobs
};

struct ErlangEstimate {
  bool valid = false;
  double lambda = 0;  // GPU requests per second
  double mu = 0;      // per second: 1 / GPU-weighted mean duration
  int gpus = 0;       // c
  int nodes = 0;      // ceil(c / GPUs per node)
  std::string basis;  // which condition set c
};

// `reference`: the hardware runtime model's reference GPU type (trace durations are times on
// it), nullptr under the trace model.
ErlangEstimate EstimateStart(const Trace& trace, const Workload& w, const NodeKind& kind,
                             const HardwareCatalog& catalog, const GpuSpec* reference,
                             const std::vector<SloCondition>& slos) {
  ErlangEstimate e;
  if (w.jobs < 2 || !(w.span_seconds > 0) || !(w.gpus_requested > 0)) return e;
  const GpuSpec& gpu = catalog.gpu(*catalog.Find(kind.group.gpu_type));
  double gpu_seconds = 0;
  double job_seconds = 0;
  for (const Job& job : trace.jobs) {
    const std::string family = ModelFamilyOf(job.model.str());
    const double speedup =
        reference != nullptr ? gpu.SpeedupFor(family) / reference->SpeedupFor(family) : 1;
    gpu_seconds += job.gpus * job.duration / speedup;
    job_seconds += job.duration / speedup;
  }
  if (!(gpu_seconds > 0)) return e;
  e.valid = true;
  e.lambda = w.gpus_requested / w.span_seconds;
  e.mu = w.gpus_requested / gpu_seconds;
  const double mean_job_seconds = job_seconds / w.jobs;
  e.gpus = static_cast<int>(std::floor(e.lambda / e.mu)) + 1;  // rho < 1
  e.basis = "rho < 1";
  for (const SloCondition& slo : slos) {
    if (!slo.at_most) continue;
    const std::string name = slo.metric.name;
    int c = 0;
    if (name == "mean_wait" && slo.bound > 0) {
      c = ServersForMeanWait(e.lambda, e.mu, slo.bound);
    } else if (name == "mean_jct" && slo.bound > mean_job_seconds) {
      c = ServersForMeanWait(e.lambda, e.mu, slo.bound - mean_job_seconds);
    } else if (name == "p50_wait" || name == "p95_wait" || name == "p99_wait") {
      c = ServersForWaitQuantile(e.lambda, e.mu, std::stoi(name.substr(1, 2)) / 100.0, slo.bound);
    }
    if (c > e.gpus) {
      e.gpus = c;
      e.basis = "M/M/c " + slo.text;
    }
  }
  e.nodes = (e.gpus + kind.group.gpus_per_node - 1) / kind.group.gpus_per_node;
  return e;
}

// ---------------------------------------------------------------------------------------------
// The zero-wait packing bound (docs/plan.md#zero-wait-packing): were every job started at its
// submission, the jobs running at any one instant would have to fit at once. A job of n GPUs on
// nodes of G takes floor(n/G) whole nodes and a remainder of n mod G GPUs on one node (the
// node-aware placements' rule), so at each instant the nodes needed are the whole nodes plus a
// bin packing of the remainders (with `pool`, which splits jobs over nodes: ceil(GPUs / G)).
// With fewer nodes than its maximum over the trace, some job waits: a lower bound for
// max_wait<=0, and a figure of how much of the peak is packing.

struct PackingBound {
  bool valid = false;
  int lower = 0;      // max over instants of the cheap lower bound (BinsLowerBound)
  double at = 0;      // the instant where it is reached (the first)
  int jobs = 0;       // running there
  int ffd = 0;        // first-fit decreasing's nodes for that instant's jobs
  int exact = -1;     // the optimum there (-1: not proven in time)
};

PackingBound ZeroWaitPacking(const Trace& trace, const NodeKind& kind,
                             const HardwareCatalog& catalog, bool hardware_runtime, bool pooled) {
  PackingBound out;
  const int g = kind.group.gpus_per_node;
  const GpuSpec& gpu = catalog.gpu(*catalog.Find(kind.group.gpu_type));
  struct Interval {
    double start, end;
    int gpus;
  };
  std::vector<Interval> jobs;
  for (const Job& job : trace.jobs) {
    if (job.gpus <= 0) continue;
    const double speedup = hardware_runtime ? gpu.SpeedupFor(ModelFamilyOf(job.model.str())) : 1;
    const double end = job.submit_time + job.duration / speedup;
    if (end > job.submit_time) jobs.push_back({job.submit_time, end, job.gpus});
  }
  if (jobs.empty()) return out;
  // Events: ends before starts at one instant (a job ending at t frees its GPUs for one at t).
  std::vector<std::pair<double, int>> events;  // (time, +index+1 start | -(index+1) end)
  for (size_t i = 0; i < jobs.size(); ++i) {
    events.emplace_back(jobs[i].start, static_cast<int>(i) + 1);
    events.emplace_back(jobs[i].end, -static_cast<int>(i) - 1);
  }
  std::sort(events.begin(), events.end());
  int64_t whole = 0, remainder_gpus = 0, large = 0, gpus = 0;
  for (const auto& [time, code] : events) {
    const int sign = code > 0 ? 1 : -1;
    const int n = jobs[std::abs(code) - 1].gpus;
    gpus += sign * n;
    whole += sign * (n / g);
    remainder_gpus += sign * (n % g);
    large += sign * (2 * (n % g) > g);
    if (sign < 0) continue;
    const int64_t lower =
        pooled ? (gpus + g - 1) / g
               : whole + std::max<int64_t>((remainder_gpus + g - 1) / g, large);
    if (lower > out.lower) {
      out.lower = static_cast<int>(lower);
      out.at = time;
    }
  }
  out.valid = true;
  BinPacking remainders{g, {}};
  int64_t whole_at = 0;
  for (const Interval& j : jobs) {
    if (!(j.start <= out.at && out.at < j.end)) continue;
    ++out.jobs;
    if (pooled) {
      remainders.sizes.push_back(j.gpus);  // only the count matters
    } else {
      whole_at += j.gpus / g;
      if (j.gpus % g > 0) remainders.sizes.push_back(j.gpus % g);
    }
  }
  if (pooled) {
    int64_t total = 0;
    for (int64_t n : remainders.sizes) total += n;
    out.ffd = out.exact = static_cast<int>((total + g - 1) / g);
    return out;
  }
  out.ffd = static_cast<int>(whole_at) + FirstFitDecreasing(remainders).bins;
  std::optional<Packing> exact = ExactBinPackingDp(remainders);
  if (!exact) exact = ExactBinPackingIlp(remainders, 10);
  if (exact) out.exact = static_cast<int>(whole_at) + exact->bins;
  return out;
}

// ---------------------------------------------------------------------------------------------
// Evaluations: one simulation per node-count vector, cached, several at once on threads.

struct Evaluation {
  std::vector<int> counts;  // per node kind
  std::string search;       // the search that asked for it first
  int order = 0;            // 1, 2, ... in evaluation order
  int gpus = 0;
  double cost_per_hour = 0;
  std::vector<double> values;  // per SLO condition
  double utilization = 0;
  double max_wait = 0;
  int64_t rejected = 0;
  int64_t unfinished = 0;
  bool capacity_ok = false;  // every "<=" condition holds and no job was rejected
  bool all_ok = false;       // and every ">=" condition and the budget
  std::string failed;        // what failed, for the table
  double wall_seconds = 0;
};

class Evaluator {
 public:
  Evaluator(RunConfig base, std::vector<NodeKind> kinds, std::vector<SloCondition> slos,
            double budget, int threads, int max_evals, BatchProgress* progress)
      : progress_(progress),
        base_(std::move(base)),
        kinds_(std::move(kinds)),
        slos_(std::move(slos)),
        budget_(budget),
        threads_(threads),
        max_evals_(max_evals) {}

  // Simulates every point not yet evaluated (in parallel), unless the evaluation limit is
  // reached (then exhausted() is true and the rest are skipped).
  void EvaluateAll(const std::vector<std::pair<std::vector<int>, std::string>>& points) {
    std::vector<Evaluation> todo;
    for (const auto& point : points) {
      // Named, not a structured binding: lambdas below capture it (clang 14 cannot capture one).
      const std::vector<int>& counts = point.first;
      const std::string& search = point.second;
      if (results_.count(counts)) continue;
      if (std::any_of(todo.begin(), todo.end(), [&](auto& e) { return e.counts == counts; })) {
        continue;
      }
      if (static_cast<int>(results_.size() + todo.size()) >= max_evals_) {
        exhausted_ = true;
        break;
      }
      Evaluation e;
      e.counts = counts;
      e.search = search;
      todo.push_back(std::move(e));
    }
    std::atomic<size_t> next{0};
    std::exception_ptr error;
    std::mutex error_mutex;
    progress_->AddTotal(todo.size());
    auto worker = [&] {
      for (size_t i = next++; i < todo.size(); i = next++) {
        const int slot = progress_->Begin();
        try {
          Simulate(&todo[i], slot);
        } catch (...) {
          std::lock_guard<std::mutex> lock(error_mutex);
          if (!error) error = std::current_exception();
        }
        progress_->End(slot);
      }
    };
    std::vector<std::thread> pool;
    const int n = std::min<int>(threads_, static_cast<int>(todo.size()));
    for (int t = 1; t < n; ++t) pool.emplace_back(worker);
    worker();
    for (std::thread& t : pool) t.join();
    if (error) std::rethrow_exception(error);
    for (Evaluation& e : todo) {
      e.order = static_cast<int>(results_.size()) + 1;
      results_.emplace(e.counts, std::move(e));
    }
  }

  const Evaluation* Find(const std::vector<int>& counts) const {
    auto it = results_.find(counts);
    return it == results_.end() ? nullptr : &it->second;
  }
  const std::map<std::vector<int>, Evaluation>& results() const { return results_; }
  bool exhausted() const { return exhausted_; }
  // Settings with nothing to act on (app/run.h), from the first simulation that had any.
  const std::vector<std::string>& warnings() const { return warnings_; }
  double CostPerHour(const std::vector<int>& counts) const {
    double cost = 0;
    for (size_t k = 0; k < kinds_.size(); ++k) cost += counts[k] * kinds_[k].NodeCostPerHour();
    return cost;
  }
  std::string ClusterLabel(const std::vector<int>& counts) const {
    std::string label;
    for (size_t k = 0; k < kinds_.size(); ++k) {
      if (counts[k] == 0) continue;
      label += (label.empty() ? "" : " + ") + std::to_string(counts[k]) + " x " + kinds_[k].label;
    }
    return label;
  }

 private:
  // Runs on a worker thread: everything it touches is its own copy or read-only shared state
  // (ExecuteRun builds its catalog, cluster, trace, policy and engine per call).
  void Simulate(Evaluation* e, int slot) {
    std::vector<NodeGroupSpec> groups;
    for (size_t k = 0; k < kinds_.size(); ++k) {
      if (e->counts[k] == 0) continue;
      NodeGroupSpec group = kinds_[k].group;
      group.count = e->counts[k];
      groups.push_back(group);
      e->gpus += group.count * group.gpus_per_node;
    }
    e->cost_per_hour = CostPerHour(e->counts);
    RunConfig config = base_;  // a private copy: Params records which keys were read
    config.cluster = "plan:" + ClusterLabel(e->counts);
    config.cluster_json = ClusterSpecJson(groups, kinds_[0].network);
    if (progress_->enabled()) {
      config.engine.progress = [this, slot](const EngineProgress& p) {
        progress_->Update(slot, p.jobs_total ? double(p.jobs_done) / p.jobs_total : 1.0);
      };
    }
    const RunOutcome outcome = ExecuteRun(config);
    if (!outcome.warnings.empty()) {
      std::lock_guard<std::mutex> lock(warnings_mutex_);
      if (warnings_.empty()) warnings_ = outcome.warnings;
    }
    e->wall_seconds = outcome.wall_seconds;
    auto value = [&](const char* metric) { return SummaryValue(outcome.summary, metric); };
    e->utilization = value("gpu_utilization");
    e->max_wait = value("wait_seconds_max");
    e->rejected = static_cast<int64_t>(value("jobs_rejected"));
    e->unfinished = static_cast<int64_t>(value("jobs_unfinished"));
    e->capacity_ok = e->rejected == 0 && e->unfinished == 0;
    if (e->rejected > 0) e->failed = "rejected";
    bool others_ok = true;
    for (const SloCondition& slo : slos_) {
      const double v = value(slo.metric.summary_metric);
      e->values.push_back(v);
      if (slo.Holds(v)) continue;
      (slo.at_most ? e->capacity_ok : others_ok) = false;
      e->failed += (e->failed.empty() ? "" : ",") + std::string(slo.metric.name);
    }
    if (e->cost_per_hour > budget_) {
      others_ok = false;
      e->failed += (e->failed.empty() ? "" : ",") + std::string("budget");
    }
    e->all_ok = e->capacity_ok && others_ok;
  }

  BatchProgress* const progress_;
  std::mutex warnings_mutex_;
  std::vector<std::string> warnings_;
  const RunConfig base_;
  const std::vector<NodeKind> kinds_;
  const std::vector<SloCondition> slos_;
  const double budget_;
  const int threads_;
  const int max_evals_;
  std::map<std::vector<int>, Evaluation> results_;
  bool exhausted_ = false;
};

// ---------------------------------------------------------------------------------------------
// One bracket search: the smallest count of node kind `kind` (other counts fixed) meeting the
// capacity conditions, assumed monotone in that count.

struct Chain {
  std::string search;
  std::vector<int> fixed;  // counts; entry `kind` is the searched one
  int kind = 0;
  int min_count = 0;  // counts below fail without simulation (cannot hold the largest job)
  int max_count = 0;  // the search never goes above
  int start = 0;      // the first guess (Erlang C)
  std::optional<int> assumed_pass;  // a count taken to pass without simulation
  std::map<int, bool> results;      // simulated counts: capacity conditions met?
  int saturated_at = INT_MAX;       // counts >= this fail (no job waited, still failing)
  bool started = false;

  std::vector<int> Counts(int n) const {
    std::vector<int> counts = fixed;
    counts[kind] = n;
    return counts;
  }
  std::optional<int> SmallestPass() const {
    std::optional<int> best = assumed_pass;
    for (const auto& [n, pass] : results) {
      if (pass && (!best || n < *best)) best = n;
    }
    return best;
  }
  int LargestFailBelow(int limit) const {
    int fail = min_count - 1;
    for (const auto& [n, pass] : results) {
      if (!pass && n < limit) fail = std::max(fail, n);
    }
    return fail;
  }
  int Ceiling() const { return std::min(max_count, saturated_at - 1); }
  bool Done() const {
    if (const auto pass = SmallestPass()) return LargestFailBelow(*pass) + 1 == *pass;
    return LargestFailBelow(INT_MAX) >= Ceiling();
  }
  // Up to `width` new counts to simulate next.
  std::vector<int> Propose(int width) {
    std::vector<int> out;
    auto add = [&](long long n) {
      if (static_cast<int>(out.size()) >= width || n < min_count || n > Ceiling()) return;
      if (results.count(static_cast<int>(n)) || (assumed_pass && n == *assumed_pass)) return;
      if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(static_cast<int>(n));
    };
    const auto pass = SmallestPass();
    if (!started && !pass) {
      started = true;
      const long long s = std::clamp(start, min_count, std::max(min_count, Ceiling()));
      add(s);
      add(s - 1);
      for (long long f = 2; f <= (1LL << 20) && static_cast<int>(out.size()) < width; f *= 2) {
        add(s * f);
        add(s / f);
      }
    } else if (!pass) {
      const long long fail = LargestFailBelow(INT_MAX);
      for (long long n = std::max(fail + 1, fail * 2); static_cast<int>(out.size()) < width;
           n *= 2) {
        add(std::min<long long>(n, Ceiling()));
        if (n >= Ceiling()) break;
      }
    } else {
      const long long lo = LargestFailBelow(*pass), hi = *pass;
      for (int j = 1; j <= width; ++j) add(lo + ((hi - lo) * j + width / 2) / (width + 1));
      if (out.empty()) add(lo + 1);
    }
    return out;
  }
  void Record(int n, const Evaluation& e, bool saturation_applies) {
    results[n] = e.capacity_ok;
    if (!e.capacity_ok && saturation_applies && e.rejected == 0 && e.max_wait == 0) {
      saturated_at = std::min(saturated_at, n);
    }
  }
};

// Runs the chains to completion, in rounds: every unfinished chain proposes counts (together
// about `threads` per round) and the round is simulated in parallel.
void RunChains(std::vector<Chain>* chains, Evaluator* evaluator, int threads) {
  while (!evaluator->exhausted()) {
    std::vector<Chain*> active;
    for (Chain& c : *chains) {
      if (!c.Done()) active.push_back(&c);
    }
    if (active.empty()) return;
    const int width = std::max(1, threads / static_cast<int>(active.size()));
    std::vector<std::pair<std::vector<int>, std::string>> points;
    std::vector<std::pair<Chain*, int>> asked;
    for (Chain* c : active) {
      for (int n : c->Propose(width)) {
        asked.emplace_back(c, n);
        const auto counts = c->Counts(n);
        if (std::any_of(counts.begin(), counts.end(), [](int x) { return x > 0; })) {
          points.emplace_back(counts, c->search);
        }
      }
    }
    if (asked.empty()) return;
    evaluator->EvaluateAll(points);
    for (auto [chain, n] : asked) {
      const auto counts = chain->Counts(n);
      if (std::all_of(counts.begin(), counts.end(), [](int x) { return x == 0; })) {
        chain->results[n] = false;  // an empty cluster
        continue;
      }
      if (const Evaluation* e = evaluator->Find(counts)) chain->Record(n, *e, true);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// What can be refused without simulating.

// The q-quantile (0 < q <= 1) of `values` by the closest rank at or above, as the summary's
// percentiles; the mean for q = 0.
double LowerBound(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  if (q == 0) {
    double sum = 0;
    for (double v : values) sum += v;
    return sum / static_cast<double>(values.size());
  }
  std::sort(values.begin(), values.end());
  const size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(values.size())));
  return values[std::clamp<size_t>(rank, 1, values.size()) - 1];
}

// Throws InputError, before any simulation, for a search that cannot succeed: no node type can
// hold the largest job within --max-nodes and the budget; a JCT condition below what the jobs'
// run times alone take on the fastest node type (JCT >= run time); a parameter or policy setting
// the cluster refuses (CheckRunConfig on the smallest cluster of the first node type).
void CheckBeforeSimulating(const RunConfig& base, const Trace& trace,
                           const std::vector<NodeKind>& kinds, const HardwareCatalog& catalog,
                           const std::vector<SloCondition>& slos,
                           const std::vector<int>& min_counts, const std::vector<int>& max_counts,
                           double budget, int max_nodes) {
  std::string why;
  bool any = false;
  for (size_t k = 0; k < kinds.size(); ++k) {
    if (min_counts[k] <= max_counts[k]) {
      any = true;
      continue;
    }
    why += (why.empty() ? "" : "; ") + kinds[k].label + ": the largest job needs " +
           std::to_string(min_counts[k]) + " nodes, ";
    if (max_counts[k] < max_nodes) {
      char cost[64];
      std::snprintf(cost, sizeof cost, "$%.2f/h, over the budget of $%.2f/h",
                    min_counts[k] * kinds[k].NodeCostPerHour(), budget);
      why += cost;
    } else {
      why += "more than --max-nodes " + std::to_string(max_nodes);
    }
  }
  if (!any) throw InputError("plan: no node type can hold the largest job: " + why);
  if (!why.empty()) spdlog::warn("plan: {} (that node type is left out)", why);

  const bool hardware = base.runtime_model == "hardware";
  std::vector<double> run_seconds;
  run_seconds.reserve(trace.jobs.size());
  for (const Job& job : trace.jobs) {
    double fastest = 1;
    if (hardware) {
      for (const NodeKind& kind : kinds) {
        const GpuSpec& gpu = catalog.gpu(*catalog.Find(kind.group.gpu_type));
        fastest = std::max(fastest, gpu.SpeedupFor(ModelFamilyOf(job.model.str())));
      }
    }
    run_seconds.push_back(job.duration / fastest);
  }
  for (const SloCondition& slo : slos) {
    const std::string name = slo.metric.name;
    if (!slo.at_most || !name.ends_with("_jct")) continue;
    const double q = name == "mean_jct" ? 0 : std::stoi(name.substr(1, 2)) / 100.0;
    const double least = LowerBound(run_seconds, q);
    if (slo.bound < least) {
      char text[256];
      std::snprintf(text, sizeof text,
                    ": the jobs' run times alone give %s = %.0f s%s (a JCT is at least the run "
                    "time), so no cluster meets it",
                    name.c_str(), least, hardware ? " on the fastest node type" : "");
      throw InputError("--slo \"" + slo.text + "\"" + text);
    }
  }

  RunConfig probe = base;
  for (size_t k = 0; k < kinds.size(); ++k) {
    if (min_counts[k] > max_counts[k]) continue;
    NodeGroupSpec group = kinds[k].group;
    group.count = std::max(1, min_counts[k]);
    probe.cluster = "plan:" + std::to_string(group.count) + " x " + kinds[k].label;
    probe.cluster_json = ClusterSpecJson({group}, kinds[k].network);
    break;
  }
  CheckRunConfig(probe);
}

// ---------------------------------------------------------------------------------------------

void WriteCsv(const std::string& path, const std::vector<NodeKind>& kinds,
              const std::vector<SloCondition>& slos, const std::vector<const Evaluation*>& rows) {
  const std::string tmp = path + ".tmp";
  const RemoveOnSignal remove_on_signal(tmp);
  {
    std::ofstream out(tmp);
    if (!out) throw InputError(path, 0, 0, "cannot write file");
    out << "order,search";
    for (const NodeKind& k : kinds) out << "," << k.label;
    out << ",gpus";
    bool utilization_is_slo = false;
    for (const SloCondition& s : slos) {
      out << "," << s.metric.summary_metric;
      utilization_is_slo = utilization_is_slo || std::string(s.metric.name) == "utilization";
    }
    if (!utilization_is_slo) out << ",gpu_utilization";
    out << ",jobs_rejected,capacity_ok,meets_all,failed,cost_per_hour,wall_seconds\n";
    char buffer[64];
    auto number = [&](double v) {
      std::snprintf(buffer, sizeof buffer, "%.10g", v);
      return std::string(buffer);
    };
    for (const Evaluation* e : rows) {
      out << e->order << "," << e->search;
      for (int c : e->counts) out << "," << c;
      out << "," << e->gpus;
      for (double v : e->values) out << "," << (std::isnan(v) ? "" : number(v));
      if (!utilization_is_slo) out << "," << number(e->utilization);
      std::string failed = e->failed;  // names joined by '+' here: no quoting needed
      std::replace(failed.begin(), failed.end(), ',', '+');
      out << "," << e->rejected << "," << (e->capacity_ok ? 1 : 0) << "," << (e->all_ok ? 1 : 0)
          << "," << failed << "," << number(e->cost_per_hour) << "," << number(e->wall_seconds)
          << "\n";
    }
    if (!out) throw InputError(path, 0, 0, "cannot write file");
  }
  std::filesystem::rename(tmp, path);
}

}  // namespace

int CommandPlan(int argc, char** argv) {
  RunConfig base;
  FilterArgs filter_args;
  std::vector<std::string> node_type_args, slo_args, price_args, params;
  double budget = kInf;
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  int max_nodes = kDefaultMaxNodes;
  int mix_steps = kDefaultMixSteps;
  int max_evals = kDefaultMaxEvals;
  int start_nodes = 0;
  std::string csv_path;
  bool show_packing = false;
  std::string log_level = "error";
  bool mkdir = false;
  ProgressOptions progress_options;
  po::options_description desc(
      "clustersim plan: the smallest cluster per node type, and the cheapest mix, that meets an "
      "SLO\n\n"
      "  clustersim plan --node-type A100-80GBx8 --node-type H100-80GBx8 --slo p95_wait<=1h\n\n"
      "Node types: GPUTYPExGPUS_PER_NODE with a catalog GPU type (clustersim list gpus), or a "
      "one-type\npreset (dgx1-v100, dgx-a100, dgx-h100, pcie-v100); priced per GPU-hour from the "
      "catalog unless\n--price overrides. SLO conditions METRIC<=VALUE or METRIC>=VALUE, all must "
      "hold; metrics:\n  " +
      SloNames() +
      "\n(times in seconds, or with s, min, h, d; utilization as 0.6 or 60%). A point also fails "
      "if\nany job is rejected (too large for it). Exit code 0 when something meets the SLO and "
      "budget, 1\nwhen nothing does.\n\noptions");
  desc.add_options()("help,h", "show this help")("trace", po::value(&base.trace_path),
                                                 "trace file (default: the bundled Philly window)")(
      "format", po::value(&base.trace_format), "trace format (default: detect from the header)")(
      "hardware", po::value(&base.hardware_path), "hardware catalog JSON (default: built in)")(
      "policy", po::value(&base.policy)->default_value("fcfs"), "ordering policy")(
      "placement", po::value(&base.placement)->default_value("first-fit"), "placement strategy")(
      "runtime-model", po::value(&base.runtime_model)->default_value("hardware"),
      "one for every candidate: hardware (trace durations are times on the trace's own GPU type "
      "where it states one, else the catalog's reference), hardware:TYPE, or trace (every "
      "type runs the trace's durations)")(
      "param", po::value(&params)->composing(), "policy parameter key=value (repeatable)")(
      "seed", po::value(&base.seed)->default_value(0), "random seed")(
      "node-type", po::value(&node_type_args)->composing(),
      "candidate node type (repeatable, or comma-separated)")(
      "node-types", po::value(&node_type_args)->composing(), "same as --node-type")(
      "price", po::value(&price_args)->composing(),
      "NODE_OR_GPU_TYPE=USD per GPU-hour (repeatable), overriding the catalog price")(
      "slo", po::value(&slo_args)->composing(),
      "condition METRIC<=VALUE or METRIC>=VALUE (repeatable; all must hold)")(
      "budget", po::value(&budget), "at most this many USD per hour for the whole cluster")(
      "jobs,j", po::value(&threads)->default_value(threads), "simulations run at once")(
      "max-nodes", po::value(&max_nodes)->default_value(kDefaultMaxNodes),
      "largest node count of one type the search tries")(
      "mix-steps", po::value(&mix_steps)->default_value(kDefaultMixSteps),
      "grid steps per type (all but the last) in the mix search; 0 = no mix search")(
      "max-evals", po::value(&max_evals)->default_value(kDefaultMaxEvals),
      "at most this many simulations in all")(
      "start-nodes", po::value(&start_nodes),
      "first node count tried for every type (default: the Erlang C estimate)")(
      "csv", po::value(&csv_path), "also write the evaluated points to this CSV file")(
      "mkdir", po::bool_switch(&mkdir), "create --csv's folder if it does not exist")(
      "packing", po::bool_switch(&show_packing),
      "print the zero-wait packing bound per node type (always with a max_wait SLO)")(
      "defrag", po::bool_switch(&base.engine.defrag),
      "defragment by migration in every simulation (fcfs; docs/defragmentation.md)")(
      "log-level", po::value(&log_level)->default_value("error"), "trace|debug|info|warn|error");
  AddProgressOptions(desc, &progress_options);
  AddFilterOptions(desc, filter_args);
  po::variables_map vm;
  if (!ParseOptions(argc, argv, desc, &vm)) return 0;
  SetLogLevel(log_level);
  const ProgressStyle progress_style = ResolveProgress(progress_options);
  if (threads < 1) throw InputError("--jobs: expected at least 1");
  if (max_nodes < 1) throw InputError("--max-nodes: expected at least 1");
  if (mix_steps < 0) throw InputError("--mix-steps: expected 0 or more");
  if (max_evals < 1) throw InputError("--max-evals: expected at least 1");
  if (vm.count("start-nodes") && start_nodes < 1) throw InputError("--start-nodes: expected >= 1");
  if (vm.count("budget") && !(budget > 0)) throw InputError("--budget: expected USD per hour > 0");
  if (slo_args.empty()) throw InputError("plan: expected at least one --slo, e.g. p95_wait<=1h");
  if (!csv_path.empty()) PrepareOutputFolder(csv_path, "--csv", mkdir);
  RemoveTemporariesOnSignal();
  const std::map<std::string, std::string> given = ParseParamOptions(params);
  CheckParamScopes(given, {base.policy}, {base.placement}, "--param");
  base.params = ParamsForRun(given, base.policy, base.placement);
  base.filter = MakeFilter(filter_args);
  base.engine.timeseries_interval_seconds = 1e12;  // no output database: one interval is enough

  HardwareCatalog custom_catalog;
  const HardwareCatalog* catalog = &HardwareCatalog::Default();
  if (!base.hardware_path.empty()) {
    custom_catalog = HardwareCatalog::FromFile(base.hardware_path);
    catalog = &custom_catalog;
  }
  FindPolicy(base.policy);
  FindPlacement(base.placement);
  std::vector<NodeKind> kinds;
  for (const std::string& arg : node_type_args) {
    size_t from = 0;
    while (from <= arg.size()) {
      const size_t comma = std::min(arg.find(',', from), arg.size());
      const std::string one = arg.substr(from, comma - from);
      if (one.empty()) throw InputError("--node-type \"" + arg + "\": empty node type");
      NodeKind kind = ParseNodeKind(one, *catalog);
      for (const NodeKind& k : kinds) {
        if (k.label == kind.label) throw InputError("--node-type " + kind.label + " given twice");
      }
      kinds.push_back(std::move(kind));
      from = comma + 1;
    }
  }
  if (kinds.empty()) throw InputError("plan: expected at least one --node-type, e.g. A100-80GBx8");
  for (const std::string& p : price_args) ApplyPrice(p, &kinds);
  std::vector<SloCondition> slos;
  for (const std::string& s : slo_args) slos.push_back(ParseSlo(s));
  CheckSloConsistency(slos);
  // The runtime model's name, checked before the trace is read (its reference type is resolved
  // after, from the trace).
  if (base.runtime_model != "trace" && base.runtime_model != "hardware" &&
      base.runtime_model.rfind("hardware:", 0) != 0) {
    throw InputError("--runtime-model " + base.runtime_model +
                     ": expected hardware, hardware:TYPE or trace" +
                     DidYouMean(base.runtime_model, {"trace", "hardware"}));
  }

  // The workload, read once here for the Erlang C estimate and the smallest useful sizes.
  const std::string trace_path = base.trace_path.empty() ? DefaultTracePath() : base.trace_path;
  Trace trace = LoadTrace(trace_path, base.trace_format);
  const FilterCounts filter_counts = ApplyFilter(base.filter, &trace);
  if (trace.jobs.empty()) {
    throw InputError(trace_path, 0, 0,
                     filter_counts.before == 0 ? "the trace holds no jobs: nothing to plan for"
                                               : "no job is left after the trace filters (" +
                                                     std::to_string(filter_counts.before) +
                                                     " read): nothing to plan for");
  }
  // One runtime model for every candidate, whatever the list (a node type gets the same count
  // alone and beside another): its reference resolved here, as a run resolves it, and named
  // explicitly so that every point uses it.
  const GpuSpec* reference = nullptr;
  if (base.runtime_model != "trace") {
    int type = -1;
    if (base.runtime_model == "hardware") {
      const auto stated = TraceGpuType(trace, *catalog);
      type = stated ? *stated : catalog->Require(catalog->reference(), "hardware catalog",
                                                 "reference");
    } else if (base.runtime_model.rfind("hardware:", 0) == 0) {
      const std::string name = Lower(base.runtime_model.substr(9));
      for (size_t t = 0; t < catalog->gpus().size(); ++t) {
        if (Lower(catalog->gpus()[t].name) == name) type = static_cast<int>(t);
      }
      if (type < 0) {
        throw InputError("--runtime-model " + base.runtime_model + ": unknown GPU type; valid: " +
                         catalog->NameList());
      }
    } else {
      throw InputError("--runtime-model " + base.runtime_model +
                       ": expected hardware, hardware:TYPE or trace");
    }
    reference = &catalog->gpu(type);
    base.runtime_model = "hardware:" + reference->name;
  }
  Workload workload;
  workload.jobs = static_cast<int64_t>(trace.jobs.size());
  workload.span_seconds = trace.jobs.back().submit_time - trace.jobs.front().submit_time;
  for (const Job& job : trace.jobs) {
    workload.max_gpus = std::max(workload.max_gpus, job.gpus);
    workload.gpus_requested += job.gpus;
  }

  std::printf("clustersim plan: %s / %s / runtime %s on %s (%lld jobs", base.policy.c_str(),
              base.placement.c_str(), base.runtime_model.c_str(),
              base.trace_path.empty() ? "bundled traces/philly_default.csv" : trace_path.c_str(),
              static_cast<long long>(workload.jobs));
  if (filter_counts.kept != filter_counts.before) {
    std::printf(" of %lld after filters", static_cast<long long>(filter_counts.before));
  }
  std::printf(")\n");
  if (reference != nullptr) {
    std::printf("  runtime: trace durations are times on %s; every candidate runs them at its "
                "speed relative to it (docs/plan.md)\n",
                reference->name.c_str());
  } else {
    std::printf("  runtime: every candidate runs the trace's durations (docs/plan.md)\n");
  }
  std::printf("  SLO:");
  for (size_t i = 0; i < slos.size(); ++i) {
    std::printf("%s %s", i ? " and" : "", slos[i].text.c_str());
  }
  std::printf(", no job rejected");
  if (std::isfinite(budget)) std::printf("; budget $%.2f/h", budget);
  std::printf("\n");

  // Erlang C starting points and the search limits, per node type.
  bool zero_wait = false;  // an SLO of max_wait <= 0: the packing bound is a floor
  for (const SloCondition& slo : slos) {
    zero_wait = zero_wait || (slo.at_most && slo.metric.name == std::string("max_wait") &&
                              slo.bound <= 0);
  }
  std::vector<ErlangEstimate> estimates;
  std::vector<int> min_counts, max_counts;
  for (const NodeKind& kind : kinds) {
    const int g = kind.group.gpus_per_node;
    const int min_count = std::max(1, (workload.max_gpus + g - 1) / g);
    int max_count = max_nodes;
    if (std::isfinite(budget) && kind.NodeCostPerHour() > 0) {
      max_count = static_cast<int>(
          std::min<double>(max_count, std::floor(budget / kind.NodeCostPerHour())));
    }
    estimates.push_back(
        EstimateStart(trace, workload, kind, *catalog, reference, slos));
    min_counts.push_back(min_count);
    max_counts.push_back(max_count);
    const ErlangEstimate& e = estimates.back();
    std::printf("  %-16s $%.2f/GPU-h, $%.2f/node-h; the largest job (%d GPUs) needs >= %d node%s",
                kind.label.c_str(), kind.price_per_gpu_hour, kind.NodeCostPerHour(),
                workload.max_gpus, min_count, min_count == 1 ? "" : "s");
    if (show_packing || zero_wait) {
      const PackingBound b = ZeroWaitPacking(trace, kind, *catalog,
                                             base.runtime_model == "hardware",
                                             base.placement == "pool");
      if (b.valid) {
        const int bound = b.exact >= 0 ? b.exact : b.lower;
        std::printf("\n  %-16s zero-wait packing: at t=%.0f s the %d jobs running need >= %d "
                    "nodes (%s; FFD %d)",
                    "", b.at, b.jobs, bound, b.exact >= 0 ? "exact" : "lower bound", b.ffd);
        // With max_wait<=0 fewer nodes fail for certain: start the search there.
        if (zero_wait && bound > min_counts.back()) min_counts.back() = bound;
      }
    }
    if (e.valid) {
      std::printf(
          "\n  %-16s Erlang C: offered load a = %.2f GPUs (lambda %.5g GPU-requests/s, "
          "1/mu %.0f s), c = %d GPUs (%s) -> %d node%s\n",
          "", e.lambda / e.mu, e.lambda, 1 / e.mu, e.gpus, e.basis.c_str(), e.nodes,
          e.nodes == 1 ? "" : "s");
    } else {
      std::printf("\n");
    }
  }

  CheckBeforeSimulating(base, trace, kinds, *catalog, slos, min_counts, max_counts, budget,
                        max_nodes);

  const auto wall_start = std::chrono::steady_clock::now();
  // The search's total is not known in advance: the line counts the simulations asked for so far.
  auto progress =
      std::make_unique<BatchProgress>("simulations", 0, progress_style, true, "clustersim plan");
  Evaluator evaluator(base, kinds, slos, budget, threads, max_evals, progress.get());
  const int k_count = static_cast<int>(kinds.size());
  std::vector<Chain> singles;
  for (int k = 0; k < k_count; ++k) {
    Chain c;
    c.search = kinds[k].label;
    c.fixed.assign(k_count, 0);
    c.kind = k;
    c.min_count = min_counts[k];
    c.max_count = max_counts[k];
    c.start = vm.count("start-nodes") ? start_nodes
                                      : (estimates[k].valid ? estimates[k].nodes : min_counts[k]);
    singles.push_back(std::move(c));
  }
  RunChains(&singles, &evaluator, threads);
  std::vector<std::optional<int>> single_answer;
  for (const Chain& c : singles) {
    single_answer.push_back(c.Done() ? c.SmallestPass() : std::nullopt);
  }

  // Mixes: a grid over the first T - 1 types, a bracket search on the last type.
  std::string mix_note;
  if (k_count >= 2 && mix_steps > 0 && !evaluator.exhausted()) {
    bool all_found = true;
    for (const auto& a : single_answer) all_found = all_found && a.has_value();
    if (!all_found) {
      mix_note = "mix search skipped: a node type alone never met the SLO";
    } else {
      std::vector<Chain> mixes;
      std::set<std::vector<int>> seen;  // small single-type answers repeat grid points
      std::vector<int> grid(k_count - 1, 0);
      while (true) {
        std::vector<int> fixed(k_count, 0);
        bool any = false;
        for (int k = 0; k + 1 < k_count; ++k) {
          fixed[k] = (*single_answer[k] * grid[k] + mix_steps - 1) / mix_steps;
          any = any || fixed[k] > 0;
        }
        // Skip the single-type ends (already known) and points that alone cost over budget.
        bool at_end = false;
        for (int k = 0; k + 1 < k_count; ++k) at_end = at_end || grid[k] == mix_steps;
        if (any && !at_end && evaluator.CostPerHour(fixed) <= budget && seen.insert(fixed).second) {
          Chain c;
          c.search = "mix";
          c.fixed = fixed;
          c.kind = k_count - 1;
          c.min_count = 0;
          c.max_count = *single_answer[k_count - 1];
          c.assumed_pass = *single_answer[k_count - 1];
          mixes.push_back(std::move(c));
        }
        int k = 0;
        while (k < k_count - 1 && ++grid[k] > mix_steps) grid[k++] = 0;
        if (k == k_count - 1) break;
      }
      RunChains(&mixes, &evaluator, threads);
    }
  }
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();

  // The table of evaluated points: by search, then by counts.
  std::vector<const Evaluation*> rows;
  for (const auto& [counts, e] : evaluator.results()) rows.push_back(&e);
  auto section = [&](const Evaluation* e) {
    for (int k = 0; k < k_count; ++k) {
      if (e->search == kinds[k].label) return k;
    }
    return k_count;
  };
  std::stable_sort(rows.begin(), rows.end(), [&](const Evaluation* a, const Evaluation* b) {
    if (section(a) != section(b)) return section(a) < section(b);
    return a->counts < b->counts;
  });
  progress.reset();  // clears the progress line before the results
  std::printf("\nevaluated points (%zu simulations, %d at a time, %.2f s):\n", rows.size(), threads,
              wall);
  std::printf("  %-4s %-16s", "#", "search");
  for (const NodeKind& k : kinds)
    std::printf(" %*s", std::max<int>(6, k.label.size()), k.label.c_str());
  std::printf(" %6s", "GPUs");
  bool utilization_is_slo = false;
  for (const SloCondition& s : slos) {
    std::printf(" %12s", ColumnName(s.metric).c_str());
    utilization_is_slo = utilization_is_slo || std::string(s.metric.name) == "utilization";
  }
  if (!utilization_is_slo) std::printf(" %11s", "utilization");
  std::printf(" %8s %10s  %s\n", "rejected", "$/h", "result");
  for (const Evaluation* e : rows) {
    std::printf("  %-4d %-16s", e->order, e->search.c_str());
    for (int k = 0; k < k_count; ++k) {
      std::printf(" %*d", std::max<int>(6, kinds[k].label.size()), e->counts[k]);
    }
    std::printf(" %6d", e->gpus);
    for (size_t i = 0; i < slos.size(); ++i) {
      std::printf(" %12s", FormatValue(slos[i].metric.unit, e->values[i]).c_str());
    }
    if (!utilization_is_slo) std::printf(" %11.3f", e->utilization);
    std::printf(" %8lld %10.2f  %s\n", static_cast<long long>(e->rejected), e->cost_per_hour,
                e->all_ok ? "pass" : ("FAIL " + e->failed).c_str());
  }

  std::printf("\nsmallest count per node type:\n");
  for (int k = 0; k < k_count; ++k) {
    const Chain& c = singles[k];
    const auto pass = c.SmallestPass();
    if (!c.Done() || !pass) {
      if (c.Done()) {
        std::printf("  %-16s not met up to %d nodes%s\n", kinds[k].label.c_str(), c.Ceiling(),
                    c.saturated_at != INT_MAX
                        ? " (no job waits beyond that: more nodes cannot help)"
                    : c.max_count < max_nodes ? " (the budget limit)"
                                              : " (--max-nodes)");
      } else {
        std::printf("  %-16s search incomplete (--max-evals %d reached)\n", kinds[k].label.c_str(),
                    max_evals);
      }
      continue;
    }
    const Evaluation* e = evaluator.Find(c.Counts(*pass));
    const int fail = c.LargestFailBelow(*pass);
    std::printf("  %-16s %d node%s (%d GPUs), $%.2f/h", kinds[k].label.c_str(), *pass,
                *pass == 1 ? "" : "s", e->gpus, e->cost_per_hour);
    if (fail >= c.min_count) {
      std::printf("; %d fail%s", fail, fail == 1 ? "s" : "");
    } else {
      std::printf("; fewer cannot hold the largest job");
    }
    if (!e->all_ok)
      std::printf("; but %s fails there, so no count of it meets all", e->failed.c_str());
    std::printf("\n");
  }
  if (!mix_note.empty()) std::printf("  (%s)\n", mix_note.c_str());

  const Evaluation* best = nullptr;
  for (const Evaluation* e : rows) {
    if (!e->all_ok) continue;
    if (!best || e->cost_per_hour < best->cost_per_hour ||
        (e->cost_per_hour == best->cost_per_hour && e->gpus < best->gpus)) {
      best = e;
    }
  }
  if (evaluator.exhausted()) {
    std::printf("\nnote: stopped at --max-evals %d simulations; the search is incomplete\n",
                max_evals);
  }
  if (best) {
    std::printf("\ncheapest meeting the SLO%s: %s (%d GPUs), $%.2f/h\n",
                std::isfinite(budget) ? " within the budget" : "",
                evaluator.ClusterLabel(best->counts).c_str(), best->gpus, best->cost_per_hour);
  } else {
    std::printf("\nno evaluated configuration meets the SLO%s\n",
                std::isfinite(budget) ? " within the budget" : "");
  }
  if (!csv_path.empty()) {
    WriteCsv(csv_path, kinds, slos, rows);
    std::printf("evaluated points written to %s\n", csv_path.c_str());
  }
  for (const std::string& warning : evaluator.warnings()) {
    std::fprintf(stderr, "clustersim plan: warning: %s\n", warning.c_str());
  }
  return best ? 0 : 1;
}

}  // namespace clustersim
