#include "cli/reliability_command.h"

#include <algorithm>
#include <boost/program_options.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "app/options.h"
#include "app/progress.h"
#include "app/reliability_study.h"
#include "sim/models/failure_catalog.h"
#include "sim/util/duration.h"
#include "sim/util/error.h"

namespace po = boost::program_options;

namespace clustersim {
namespace {

// "1024,4096" or "0-4" (every integer from the first to the last) or a mix: "0-2,4".
std::vector<int> ParseCounts(const std::string& text, const std::string& option) {
  std::vector<int> out;
  std::stringstream items(text);
  std::string item;
  auto number = [&](const std::string& s) {
    size_t used = 0;
    long v = 0;
    try {
      v = std::stol(s, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != s.size() || s.empty() || v < 0 || v > 100'000'000) {
      throw InputError(option + " " + text +
                       ": expected integers >= 0 separated by commas, or a range A-B");
    }
    return static_cast<int>(v);
  };
  while (std::getline(items, item, ',')) {
    const auto dash = item.find('-', 1);
    if (dash == std::string::npos) {
      out.push_back(number(item));
      continue;
    }
    const int first = number(item.substr(0, dash));
    const int last = number(item.substr(dash + 1));
    if (last < first || last - first > 1000) {
      throw InputError(option + " " + item + ": expected a range A-B with A <= B (at most 1000)");
    }
    for (int v = first; v <= last; ++v) out.push_back(v);
  }
  if (out.empty()) throw InputError(option + ": expected at least one value");
  return out;
}

struct Stats {
  double mean = NAN, sd = NAN, min = NAN, max = NAN;
};
Stats Summarize(const std::vector<double>& v) {
  Stats s;
  if (v.empty()) return s;
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / v.size();
  double squares = 0;
  for (double x : v) squares += (x - s.mean) * (x - s.mean);
  s.sd = v.size() > 1 ? std::sqrt(squares / (v.size() - 1)) : 0.0;
  s.min = *std::min_element(v.begin(), v.end());
  s.max = *std::max_element(v.begin(), v.end());
  return s;
}

void WriteCsv(const std::string& path, const std::vector<ReliabilityRow>& rows) {
  const std::string partial = path + ".partial";
  {
    std::ofstream out(partial);
    out << "gpus,nodes,spares,seed,model_interruptions_per_day,model_mtbf_hours,save_seconds,"
           "restore_seconds,interval_seconds,pause_seconds,shortage_probability,"
           "hold_seconds,wait_seconds,model_ettr,sim_interruptions_per_day,sim_mtbf_hours,sim_"
           "ettr\n";
    char line[512];
    for (const ReliabilityRow& r : rows) {
      const size_t seeds = std::max<size_t>(1, r.sim_ettr.size());
      for (size_t k = 0; k < seeds; ++k) {
        const bool sim = k < r.sim_ettr.size();
        std::snprintf(
            line, sizeof line,
            "%d,%d,%d,%s,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g\n",
            r.gpus, r.nodes, r.spares, sim ? std::to_string(k).c_str() : "",
            r.interruptions_per_day, r.mtbf_hours, r.save_seconds, r.restore_seconds,
            r.plan.interval_seconds, r.plan.pause_seconds, r.shortage_probability, r.hold_seconds,
            r.wait_seconds, r.ettr, sim ? r.sim_interruptions_per_day[k] : NAN,
            sim ? r.sim_mtbf_hours[k] : NAN, sim ? r.sim_ettr[k] : NAN);
        out << line;
      }
    }
    if (!out) throw InputError(path, 0, 0, "cannot write file");
  }
  std::error_code error;
  std::filesystem::rename(partial, path, error);
  if (error) throw InputError(path, 0, 0, "cannot write file");
}

}  // namespace

int CommandReliability(int argc, char** argv) {
  ReliabilityStudySettings s;
  std::string gpus_text = "16384", spares_text = "0", policy = "daly", csv_path;
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  bool no_simulation = false;
  po::options_description desc(
      "clustersim reliability [--gpus N,...] [--spares K|A-B] [options]: for one training job of "
      "N GPUs\non a cluster of its nodes plus K hot spares, the interruptions it can expect, its "
      "checkpoint\ninterval and its effective training time ratio (ETTR), from the closed-form "
      "model and by\nsimulation side by side (docs/reliability.md)\n\noptions");
  desc.add_options()("help,h", "show this help")(
      "gpus", po::value(&gpus_text)->default_value(gpus_text),
      "job sizes in GPUs, comma-separated (multiples of --gpus-per-node)")(
      "spares", po::value(&spares_text)->default_value(spares_text),
      "hot spare nodes: counts (0,2,4) or a range (0-4)")(
      "gpu-type", po::value(&s.gpu_type)->default_value(s.gpu_type), "GPU type of the nodes")(
      "gpus-per-node", po::value(&s.gpus_per_node)->default_value(s.gpus_per_node),
      "GPUs per node")("nodes-per-rack", po::value(&s.nodes_per_rack)->default_value(2),
                       "nodes under one leaf switch (Llama 3's racks hold 2 servers)")(
      "failure-model", po::value(&s.failure_model)->default_value(s.failure_model),
      "failure model: fleet or a JSON file")(
      "mttr", DurationValue("--mttr", &s.mttr_seconds, kSecondsPerHour)->default_value("4"),
      "repair time of a failed node or GPU (a plain number is hours)")(
      "swap-time", DurationValue("--swap-time", &s.swap_seconds)->default_value("0"),
      "time a spare takes to replace a failed node, beyond the detection")(
      "checkpoint-policy", po::value(&policy)->default_value(policy),
      "fixed (--checkpoint-interval), young or daly")(
      "checkpoint-interval", DurationValue("--checkpoint-interval", &s.fixed_interval_seconds),
      "computing time between checkpoints with --checkpoint-policy fixed")(
      "checkpoint-async", po::bool_switch(&s.checkpoint.async), "asynchronous checkpoints")(
      "model", po::value(&s.model)->default_value("Llama-3-405B"),
      "catalog model whose state sets the checkpoint size; \"\" = --checkpoint-cost")(
      "storage-gbps", po::value(&s.storage.write_gbps)->default_value(2000),
      "checkpoint storage bandwidth for the job, GB/s (Llama 3: Tectonic, 2 TB/s sustained)")(
      "node-storage-gbps", po::value(&s.storage.node_gbps)->default_value(0),
      "storage bandwidth per node, GB/s (0 = no per-node limit)")(
      "checkpoint-cost", DurationValue("--checkpoint-cost", &s.save_seconds)->default_value("0"),
      "checkpoint save time without --model")(
      "restore-cost", DurationValue("--restore-cost", &s.restore_seconds)->default_value("0"),
      "checkpoint restore time without --model")("days", po::value(&s.days)->default_value(30),
                                                 "days of work of the simulated job")(
      "seeds", po::value(&s.seeds)->default_value(5), "simulations per row (seeds 0, 1, ...)")(
      "no-simulation", po::bool_switch(&no_simulation), "the model's columns only")(
      "jobs,j", po::value(&threads)->default_value(threads), "simulations run at once")(
      "csv", po::value(&csv_path), "also write the rows, one line per seed, to this CSV file")(
      "hardware", po::value(&s.hardware_path), "hardware catalog JSON (default: built in)")(
      "models", po::value(&s.models_path), "model catalog JSON (default: built in)");
  ProgressOptions progress_options;
  AddProgressOptions(desc, &progress_options);
  po::variables_map vm;
  if (!ParseOptions(argc, argv, desc, &vm)) return 0;
  s.gpus = ParseCounts(gpus_text, "--gpus");
  s.spares = ParseCounts(spares_text, "--spares");
  s.threads = threads;
  if (!ParseCheckpointRule(policy, &s.checkpoint.rule)) {
    throw InputError("--checkpoint-policy: expected fixed, young or daly, got \"" + policy + "\"");
  }
  s.storage.read_gbps = s.storage.write_gbps;
  if (s.model.empty()) s.storage = {};
  if (!(s.storage.node_gbps >= 0)) throw InputError("--node-storage-gbps: expected >= 0");
  if (!s.model.empty() && !(s.storage.write_gbps > 0)) {
    throw InputError("--storage-gbps: expected a bandwidth > 0 (GB/s)");
  }

  auto progress = std::make_unique<BatchProgress>(
      "simulations", s.gpus.size() * s.spares.size() * (no_simulation ? 0 : s.seeds),
      ResolveProgress(progress_options), false, "clustersim reliability");
  std::vector<int> slots;
  const std::vector<ReliabilityRow> rows = RunReliabilityStudy(s, !no_simulation, [&](int, int) {
    const int slot = progress->Begin();
    progress->End(slot);
  });
  progress.reset();

  const FailureCatalog catalog = FailureCatalog::Load(s.failure_model, "--failure-model");
  std::printf("failure model %s (%zu causes): %s\n", catalog.origin().c_str(),
              catalog.causes().size(), catalog.source().c_str());
  std::printf("nodes of %d x %s, %d per rack; repair %s; spare swap %s after detection\n",
              s.gpus_per_node, s.gpu_type.c_str(), s.nodes_per_rack,
              FormatWallTime(s.mttr_seconds).c_str(), FormatWallTime(s.swap_seconds).c_str());
  if (!s.model.empty()) {
    std::printf(
        "checkpoints: %s%s, %s state at %g GB/s%s\n", policy.c_str(),
        s.checkpoint.async ? " asynchronous" : "", s.model.c_str(), s.storage.write_gbps,
        s.storage.node_gbps > 0
            ? (" (at most " + std::to_string(s.storage.node_gbps).substr(0, 5) + " GB/s per node)")
                  .c_str()
            : "");
  } else {
    std::printf("checkpoints: %s%s, save %.1f s, restore %.1f s\n", policy.c_str(),
                s.checkpoint.async ? " asynchronous" : "", s.save_seconds, s.restore_seconds);
  }
  std::printf("one job, %g days of work%s\n\n", s.days,
              no_simulation ? "" : (", " + std::to_string(s.seeds) + " seeds").c_str());
  std::printf("%6s %5s %6s | %7s %7s %7s %7s %6s %6s", "gpus", "nodes", "spares", "int/day",
              "MTBF_h", "save_s", "tau_min", "short", "ETTR");
  if (!no_simulation)
    std::printf(" | %7s %7s %6s %6s %13s", "int/day", "MTBF_h", "ETTR", "sd", "[min, max]");
  std::printf("\n");
  for (const ReliabilityRow& r : rows) {
    std::printf("%6d %5d %6d | %7.2f %7.2f %7.1f %7.1f %6.3f %6.3f", r.gpus, r.nodes, r.spares,
                r.interruptions_per_day, r.mtbf_hours, r.save_seconds, r.plan.interval_seconds / 60,
                r.shortage_probability, r.ettr);
    if (!no_simulation) {
      const Stats per_day = Summarize(r.sim_interruptions_per_day);
      const Stats mtbf = Summarize(r.sim_mtbf_hours);
      const Stats ettr = Summarize(r.sim_ettr);
      std::printf(" | %7.2f %7.2f %6.3f %6.3f [%.3f, %.3f]", per_day.mean, mtbf.mean, ettr.mean,
                  ettr.sd, ettr.min, ettr.max);
    }
    std::printf("\n");
  }
  std::printf(
      "\nmodel: int/day = interruptions per day of holding GPUs, MTBF_h = hours between them, "
      "save_s = checkpoint save, tau_min = interval\n"
      "(computing minutes between checkpoints), short = share of hardware failures that find "
      "no spare%s\n",
      no_simulation ? "." : "; simulated: mean over the seeds, ETTR's sample sd and range");
  if (!csv_path.empty()) WriteCsv(csv_path, rows);
  return 0;
}

}  // namespace clustersim
