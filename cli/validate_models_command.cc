#include "cli/validate_models_command.h"

#include <boost/program_options.hpp>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "app/options.h"
#include "sim/hardware/hardware.h"
#include "sim/models/model_catalog.h"
#include "sim/models/validation.h"
#include "sim/util/error.h"
#include "sim/util/json_file.h"
#include "sim/util/output_path.h"
#include "sim/util/temporary_files.h"

namespace po = boost::program_options;

namespace clustersim {
namespace {

std::string Percent(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f%%", 100 * x);
  return b;
}

void PrintTable(const char* title, const std::vector<ErrorSummary>& rows) {
  std::printf("\n%s\n  %-26s %5s %9s %9s %9s %9s\n", title, "", "rows", "median|e|", "p90|e|",
              "worst|e|", "mean e");
  for (const ErrorSummary& s : rows) {
    std::printf("  %-26s %5d %9s %9s %9s %9s\n", s.key.c_str(), s.rows,
                Percent(s.median_abs).c_str(), Percent(s.p90_abs).c_str(),
                Percent(s.worst_abs).c_str(), Percent(s.mean_signed).c_str());
  }
}

std::vector<ThroughputResult> OfSplit(const std::vector<ThroughputResult>& all,
                                      const std::string& split) {
  std::vector<ThroughputResult> out;
  for (const auto& r : all) {
    if (r.row->split == split) out.push_back(r);
  }
  return out;
}

std::string CsvQuote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

void WriteRowsCsv(const std::string& path, const std::vector<ThroughputResult>& results) {
  const std::string temp = path + ".tmp";
  const RemoveOnSignal remove_on_signal(temp);
  {
    std::ofstream out(temp);
    if (!out) throw InputError(path, 0, 0, "a writable file");
    out << "id,split,group,model,precision,framework,gpu,gpus,tp,pp,micro_batch,accumulation,"
           "measured_samples_per_s,predicted_samples_per_s,error,measured_mfu,predicted_mfu,"
           "b_max,fits,step_s,compute_s,tp_comm_s,pp_comm_s,optimizer_s,dp_comm_s,loader_speedup,"
           "source\n";
    char buf[512];
    for (const auto& r : results) {
      const ThroughputRow& w = *r.row;
      std::snprintf(
          buf, sizeof buf, "%s,%s,%s,%s,%s,%s,%s,%d,%d,%d,%d,%d,%.6g,%.6g,%.4f,%.4f,%.4f,%lld,%d,",
          w.id.c_str(), w.split.c_str(), w.group.c_str(),
          (w.model == "GPT" ? "GPT-" + std::to_string(w.layers) + "x" + std::to_string(w.hidden)
                            : w.model)
              .c_str(),
          w.precision.c_str(), w.framework.c_str(), w.gpu.c_str(), w.gpus, w.tp, w.pp,
          w.micro_batch, w.accumulation, r.measured_samples, r.predicted_samples, r.error,
          r.measured_mfu, r.predicted_mfu, static_cast<long long>(r.max_batch), r.fits ? 1 : 0);
      const StepEstimate& e = r.estimate;
      out << buf;
      std::snprintf(buf, sizeof buf, "%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.4f,", e.step_seconds,
                    e.compute_seconds, e.tp_comm_seconds, e.pp_comm_seconds, e.optimizer_seconds,
                    e.comm_seconds, r.loader_speedup);
      out << buf << CsvQuote(w.source) << "\n";
    }
    if (!out) throw InputError(path, 0, 0, "a writable file");
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    throw InputError(path, 0, 0, "a writable file (rename failed)");
  }
}

}  // namespace

int CommandValidateModels(int argc, char** argv) {
  std::string models_path, hardware_path, csv_path, throughput_path, memory_path;
  bool fit = false, rows = false, mkdir = false;
  po::options_description desc(
      "clustersim validate-models: the memory and throughput models against published\n"
      "measurements (sim/data/validation/, compiled in; docs/model-validation.md). Prints the\n"
      "error of predicted against measured throughput for the held-out, calibration and fresh\n"
      "rows (each on its own; fresh: gathered after the models were frozen) by GPU type, model,\n"
      "scale, source and precision, the large language models' utilization, and whether B_max\n"
      "respects every published memory bracket.\n\noptions");
  desc.add_options()("help,h", "show this help")(
      "csv", po::value(&csv_path), "write every throughput row with its prediction to this CSV")(
      "mkdir", po::bool_switch(&mkdir), "create --csv's folder if it does not exist")(
      "rows", po::bool_switch(&rows), "print every throughput row")(
      "fit", po::bool_switch(&fit),
      "print the efficiency tables fitted to the calibration rows (for sim/data/models.json)")(
      "models", po::value(&models_path), "model catalog JSON (default: built in)")(
      "hardware", po::value(&hardware_path), "hardware catalog JSON (default: built in)")(
      "throughput-data", po::value(&throughput_path),
      "throughput rows CSV (default: the built-in sim/data/validation/throughput.csv)")(
      "memory-data", po::value(&memory_path),
      "memory brackets CSV (default: the built-in sim/data/validation/memory.csv)");
  po::variables_map vm;
  if (!ParseOptions(argc, argv, desc, &vm)) return 0;
  if (!csv_path.empty()) PrepareOutputFolder(csv_path, "--csv", mkdir);
  RemoveTemporariesOnSignal();
  const ModelCatalog models =
      models_path.empty() ? ModelCatalog::Default() : ModelCatalog::FromFile(models_path);
  const HardwareCatalog hardware =
      hardware_path.empty() ? HardwareCatalog::Default() : HardwareCatalog::FromFile(hardware_path);
  ValidationData custom;
  const ValidationData* data = &DefaultValidationData();
  if (!throughput_path.empty() || !memory_path.empty()) {
    if (throughput_path.empty() || memory_path.empty()) {
      throw InputError("validate-models: --throughput-data and --memory-data go together");
    }
    custom = ParseValidationData(ReadFileText(throughput_path), throughput_path,
                                 ReadFileText(memory_path), memory_path);
    data = &custom;
  }
  if (fit) {
    std::printf("%s", EfficiencyJson(FitEfficiency(*data, models, hardware)).c_str());
    return 0;
  }
  const auto results = ValidateThroughput(*data, models, hardware);
  const auto memory = ValidateMemory(*data, models, hardware);
  const auto held = OfSplit(results, "heldout");
  const auto cal = OfSplit(results, "calibration");
  // The fresh set: gathered after the models were frozen, never fitted to nor revised after
  // (docs/model-validation.md, "A fresh held-out set"). Reported on its own, never pooled with
  // the held-out rows.
  const auto fresh = OfSplit(results, "fresh");
  size_t memory_held = 0, memory_fresh = 0;
  for (const auto& m : memory) {
    memory_held += m.row->split == "heldout";
    memory_fresh += m.row->split == "fresh";
  }
  std::printf(
      "validate-models: %zu throughput rows (%zu held out, %zu calibration, %zu fresh), %zu "
      "memory brackets (%zu held out, %zu calibration, %zu fresh)\n",
      results.size(), held.size(), cal.size(), fresh.size(), memory.size(), memory_held,
      memory.size() - memory_held - memory_fresh, memory_fresh);
  for (const auto& part : {std::make_pair("held-out", &held), std::make_pair("calibration", &cal),
                           std::make_pair("fresh", &fresh)}) {
    if (part.second->empty()) continue;
    const ErrorSummary s = SummarizeAll(*part.second, part.first);
    std::printf("  %-11s median |error| %s, p90 %s, worst %s, mean signed %s\n", part.first,
                Percent(s.median_abs).c_str(), Percent(s.p90_abs).c_str(),
                Percent(s.worst_abs).c_str(), Percent(s.mean_signed).c_str());
  }
  for (const auto& part : {std::make_pair("held-out", &held), std::make_pair("fresh", &fresh)}) {
    if (part.second->empty()) continue;
    const std::string name = part.first;
    const auto& rows_of = *part.second;
    PrintTable((name + " rows by GPU type").c_str(),
               Summarize(rows_of, [](const ThroughputResult& r) { return r.row->gpu; }));
    PrintTable((name + " rows by model").c_str(), Summarize(rows_of, [](const ThroughputResult& r) {
                 return r.row->model == "GPT" ? std::string("GPT (Megatron shapes)") : r.row->model;
               }));
    PrintTable((name + " rows by GPUs").c_str(), Summarize(rows_of, [](const ThroughputResult& r) {
                 return ScaleBucket(r.row->gpus);
               }));
    PrintTable((name + " rows by source").c_str(),
               Summarize(rows_of, [](const ThroughputResult& r) { return r.row->group; }));
    PrintTable((name + " rows by precision").c_str(),
               Summarize(rows_of, [](const ThroughputResult& r) { return r.row->precision; }));
  }
  PrintTable("calibration rows by source",
             Summarize(cal, [](const ThroughputResult& r) { return r.row->group; }));

  std::printf("\nlarge language models: model-FLOPs utilization, measured and predicted\n");
  std::printf("  %-5s %-11s %-16s %-10s %6s %5s %5s %9s %9s %8s\n", "id", "split", "model", "gpu",
              "gpus", "TP", "PP", "measured", "predicted", "error");
  for (const auto& r : results) {
    if (r.row->model != "GPT") continue;
    const std::string name =
        "GPT-" + std::to_string(r.row->layers) + "x" + std::to_string(r.row->hidden);
    std::printf("  %-5s %-11s %-16s %-10s %6d %5d %5d %9s %9s %8s\n", r.row->id.c_str(),
                r.row->split.c_str(), name.c_str(), r.row->gpu.c_str(), r.row->gpus, r.row->tp,
                r.row->pp, Percent(r.measured_mfu).c_str(), Percent(r.predicted_mfu).c_str(),
                Percent(r.error).c_str());
  }

  int respected = 0;
  std::printf(
      "\nmemory brackets (largest published batch that ran / smallest that ran out of "
      "memory; B_max predicted)\n");
  std::printf("  %-4s %-11s %-11s %5s %-10s %-12s %-10s %6s %6s %6s  %s\n", "id", "split", "model",
              "seq", "precision", "framework", "gpu", "fits", "oom", "B_max", "");
  for (const auto& m : memory) {
    respected += m.respected;
    std::printf("  %-4s %-11s %-11s %5d %-10s %-12s %-10s %6d %6s %6lld  %s\n", m.row->id.c_str(),
                m.row->split.c_str(), m.row->model.c_str(), m.row->sequence,
                m.row->precision.c_str(), m.row->framework.c_str(), m.row->gpu.c_str(), m.row->fits,
                m.row->oom ? std::to_string(m.row->oom).c_str() : "-",
                static_cast<long long>(m.max_batch), m.respected ? "ok" : "VIOLATED");
  }
  int fits = 0, fresh_fits = 0;
  for (const auto& r : results) {
    fits += r.fits;
    fresh_fits += r.fits && r.row->split == "fresh";
  }
  std::printf(
      "  %d of %zu brackets respected; %d of %zu throughput rows' micro-batches fit "
      "(B_max >= the published batch; fresh rows: %d of %zu)\n",
      respected, memory.size(), fits, results.size(), fresh_fits, fresh.size());
  for (const auto& r : results) {
    if (!r.fits) {
      std::printf("    does not fit: %s (%s on %s, micro-batch %d, B_max %lld)\n",
                  r.row->id.c_str(), r.row->model.c_str(), r.row->gpu.c_str(), r.row->micro_batch,
                  static_cast<long long>(r.max_batch));
    }
  }
  if (rows) {
    std::printf("\nrows\n  %-5s %-11s %-22s %-11s %-10s %-10s %6s %4s %4s %5s %10s %10s %8s\n",
                "id", "split", "group", "model", "precision", "gpu", "gpus", "TP", "PP", "batch",
                "measured", "predicted", "error");
    for (const auto& r : results) {
      const ThroughputRow& w = *r.row;
      std::printf("  %-5s %-11s %-22s %-11s %-10s %-10s %6d %4d %4d %5d %10.1f %10.1f %8s\n",
                  w.id.c_str(), w.split.c_str(), w.group.c_str(), w.model.c_str(),
                  w.precision.c_str(), w.gpu.c_str(), w.gpus, w.tp, w.pp, w.micro_batch,
                  r.measured_samples, r.predicted_samples, Percent(r.error).c_str());
    }
  }
  if (!csv_path.empty()) {
    WriteRowsCsv(csv_path, results);
    std::printf("\nwritten to %s\n", csv_path.c_str());
  }
  return 0;
}

}  // namespace clustersim
