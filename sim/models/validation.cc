#include "sim/models/validation.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>

#include "sim/hardware/cluster.h"
#include "sim/hardware/topology.h"
#include "sim/models/validation_data.h"  // generated: kValidationThroughputCsv, kValidationMemoryCsv
#include "sim/util/csv.h"
#include "sim/util/error.h"
#include "sim/util/statistics.h"

namespace clustersim {
namespace {

// ---- CSV ----

struct CsvRecord {
  std::vector<std::string> fields;
  std::vector<int> columns;  // 1-based column of each field's first character
  int64_t line = 0;
};

// The records of a CSV text, split by the project's splitter (sim/util/csv.h); empty lines are
// skipped.
std::vector<CsvRecord> ParseCsv(const std::string& text, const std::string& origin) {
  std::vector<CsvRecord> out;
  std::istringstream in(text);
  std::string line;
  int64_t number = 0;
  CsvSplitter splitter;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    CsvRecord record;
    record.line = number;
    for (const CsvField& f : splitter.Split(line, origin, number)) {
      record.fields.emplace_back(f.text);
      record.columns.push_back(f.column);
    }
    out.push_back(std::move(record));
  }
  return out;
}

class Columns {
 public:
  Columns(const CsvRecord& header, const std::string& origin,
          const std::vector<std::string>& required)
      : origin_(origin) {
    for (size_t i = 0; i < header.fields.size(); ++i) index_[header.fields[i]] = i;
    for (const std::string& name : required) {
      if (!index_.count(name)) {
        throw InputError(origin, header.line, 1, "a column named \"" + name + "\"");
      }
    }
  }
  bool Has(const std::string& name) const { return index_.count(name) != 0; }
  // The 1-based column of the field `name` in `r` (the last field's when `r` is short).
  int Column(const CsvRecord& r, const std::string& name) const {
    const size_t i = index_.at(name);
    return i < r.columns.size() ? r.columns[i] : r.columns.back();
  }
  const std::string& Text(const CsvRecord& r, const std::string& name) const {
    const size_t i = index_.at(name);
    if (i >= r.fields.size()) {
      throw InputError(origin_, r.line, r.columns.back(), "a value for column \"" + name + "\"");
    }
    return r.fields[i];
  }
  int Int(const CsvRecord& r, const std::string& name, int min, bool may_be_empty) const {
    const std::string& t = Text(r, name);
    if (t.empty() && may_be_empty) return 0;
    try {
      size_t used = 0;
      const long v = std::stol(t, &used);
      if (used == t.size() && v >= min && v <= 1000000000L) return static_cast<int>(v);
    } catch (const std::exception&) {
    }
    throw InputError(
        origin_, r.line, Column(r, name),
        "an integer >= " + std::to_string(min) + " in column \"" + name + "\", got \"" + t + "\"");
  }
  double Positive(const CsvRecord& r, const std::string& name) const {
    const std::string& t = Text(r, name);
    try {
      size_t used = 0;
      const double v = std::stod(t, &used);
      if (used == t.size() && v > 0 && std::isfinite(v)) return v;
    } catch (const std::exception&) {
    }
    throw InputError(origin_, r.line, Column(r, name),
                     "a number > 0 in column \"" + name + "\", got \"" + t + "\"");
  }
  void OneOf(const CsvRecord& r, const std::string& name,
             const std::vector<std::string>& allowed) const {
    const std::string& t = Text(r, name);
    for (const auto& a : allowed) {
      if (t == a) return;
    }
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + (a.empty() ? "(empty)" : a);
    throw InputError(origin_, r.line, Column(r, name),
                     "one of " + list + " in column \"" + name + "\", got \"" + t + "\"");
  }

 private:
  std::string origin_;
  std::map<std::string, size_t> index_;
};

// ---- systems: the node types of the measurements ----

struct SystemSpec {
  const char* name;
  int gpus_per_node;
  NodeTopology topology;
  double nic_gbps;  // Gbit/s per node
};

// DGX-1 (V100): 4 x 100 Gb/s EDR InfiniBand; DGX-2: 8 x 100 Gb/s EDR; DGX A100: 8 x 200 Gb/s HDR;
// DGX H100: 8 x 400 Gb/s NDR (NVIDIA DGX-1, DGX-2, DGX A100 and DGX H100 system datasheets).
constexpr SystemSpec kSystems[] = {
    {"dgx1", 8, NodeTopology::kHybridCubeMesh, 400},
    {"dgx2", 16, NodeTopology::kNvSwitch, 800},
    {"dgx-a100", 8, NodeTopology::kNvSwitch, 1600},
    {"dgx-h100", 8, NodeTopology::kNvSwitch, 3200},
};

const SystemSpec* FindSystem(const std::string& name) {
  for (const auto& s : kSystems) {
    if (name == s.name) return &s;
  }
  return nullptr;
}

// Clusters and topologies built for the rows, by (system, GPU type, nodes).
class TopologyCache {
 public:
  explicit TopologyCache(const HardwareCatalog& hardware) : hardware_(hardware) {}
  struct Entry {
    std::unique_ptr<Cluster> cluster;
    std::unique_ptr<Topology> topology;
  };
  const Entry& Get(const SystemSpec& system, const std::string& gpu, int nodes) {
    const std::string key = std::string(system.name) + "/" + gpu + "/" + std::to_string(nodes);
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
    NodeGroupSpec group;
    group.count = nodes;
    group.gpu_type = gpu;
    group.gpus_per_node = system.gpus_per_node;
    group.topology = system.topology;
    group.nic_gbps = system.nic_gbps;
    const std::string json = ClusterSpecJson({group}, NetworkSpec{});
    Entry entry;
    entry.cluster = std::make_unique<Cluster>(
        ClusterSpec::FromJsonText(json, std::string("validation:") + system.name, hardware_),
        hardware_);
    entry.topology = std::make_unique<Topology>(*entry.cluster);
    return cache_.emplace(key, std::move(entry)).first->second;
  }

 private:
  const HardwareCatalog& hardware_;
  std::map<std::string, Entry> cache_;
};

DataParallelSetup CommSetupFor(const ThroughputRow& row, const SystemSpec& system,
                               TopologyCache& cache) {
  const int gpn = system.gpus_per_node;
  const int nodes = (row.gpus + gpn - 1) / gpn;
  const auto& entry = cache.Get(system, row.gpu, nodes);
  const Topology& topo = *entry.topology;
  const int mp = row.tp * row.pp;
  DataParallelSetup dp;
  dp.replicas = row.gpus / mp;
  if (row.tp > 1) {
    std::vector<int> ring;
    for (int g = 0; g < row.tp; ++g) ring.push_back(g);
    dp.tp_ring_gbps = topo.RingBandwidthGbps(ring);
    dp.tp_hop_seconds = topo.RingHopLatencySeconds(ring);
  }
  if (row.pp > 1) {
    const std::vector<int> pair = {0, row.tp};
    dp.pp_gbps = topo.RingBandwidthGbps(pair);
    dp.pp_latency_seconds = topo.RingHopLatencySeconds(pair);
  }
  if (dp.replicas > 1) {
    std::vector<int> ring;
    for (int r = 0; r < dp.replicas; ++r) ring.push_back(r * mp);
    dp.ring_gbps = topo.RingBandwidthGbps(ring);
    dp.hop_latency_seconds = topo.RingHopLatencySeconds(ring);
    if (nodes > 1 && mp * 1 < row.gpus) {
      // Rings of the node's other GPUs leave through the same NICs at the same time.
      const int concurrent = std::min(gpn, mp);
      dp.ring_gbps = std::min(dp.ring_gbps, system.nic_gbps / 8.0 / concurrent);
    }
  }
  return dp;
}

std::optional<Recomputation> ParseRecompute(const std::string& t) {
  if (t == "none") return Recomputation::kNone;
  if (t == "selective") return Recomputation::kSelective;
  if (t == "full") return Recomputation::kFull;
  return std::nullopt;
}

// The model a row describes: a catalog entry (with the row's recomputation) or a GPT decoder.
ModelSpec RowModel(const ThroughputRow& row, const ModelCatalog& models) {
  if (row.model != "GPT") {
    ModelSpec m = models.Require(row.model);
    if (auto r = ParseRecompute(row.recompute)) m.recomputation = *r;
    return m;
  }
  ModelSpec m;
  const double h = row.hidden, L = row.layers, V = row.vocab;
  m.name = "GPT-" + std::to_string(row.layers) + "x" + std::to_string(row.hidden);
  m.family = "transformer";
  m.architecture = "decoder";
  m.parameters = 12.0 * L * h * h + V * h;
  m.layers = row.layers;
  m.hidden_size = row.hidden;
  m.attention_heads = row.heads;
  m.sequence_length = row.sequence;
  m.vocab_size = row.vocab;
  m.precision = *ParsePrecision(row.precision);
  m.optimizer = Optimizer::kAdam;
  m.recomputation = ParseRecompute(row.recompute).value_or(Recomputation::kSelective);
  m.noise_scale_min = 132;
  m.noise_scale_max = 1250;
  m.reference_batch = 1536;
  m.activation_bytes_per_sample = 1;  // unused: transformers' figures come from the formula
  m.flops_per_sample = 1;
  return m;
}

JobSettings RowSettings(const ThroughputRow& row) {
  JobSettings s;
  s.precision = ParsePrecision(row.precision);
  s.sequence_length = row.sequence > 0 ? row.sequence : row.image;
  return s;
}

// Samples/s of the whole job from the published figure.
double MeasuredSamples(const ThroughputRow& row) {
  if (row.unit == "samples/s") return row.measured;
  const double s = row.sequence, h = row.hidden, L = row.layers, V = row.vocab;
  const double per_sample = row.unit == "model-TFLOP/s/GPU"
                                ? 72.0 * s * L * h * h * (1.0 + s / (6.0 * h) + V / (12.0 * L * h))
                                : 96.0 * s * L * h * h * (1.0 + s / (6.0 * h) + V / (16.0 * L * h));
  return row.measured * 1e12 * row.gpus / per_sample;
}

// ---- data loaders: how much of a nominal sequence a published sample costs ----

// A row's `loader` says how its samples were padded. The step-time model prices every sample at
// the full `sequence`, which is what a loader that pads each batch to the maximum length runs.
// NVIDIA's LDDL loader with sequence binning (bin size 64) picks one bin of 64 lengths per
// iteration and pads each batch only to its longest sample, so a "sequence 512" sample costs less;
// its published end-to-end speedup over no binning multiplies the predicted samples/s.
struct LoaderSpec {
  const char* name;
  double speedup;  // measured samples/s with this loader over the same run padded to `sequence`
  int sequence;    // the nominal sequence length the speedup was measured at
};

// "lddl-bin64": NVIDIA/LDDL@b6d5c156 docs/images/binning_perf.gif, "Performance vs. Bin Size on
// BERT Phase 2 Pretraining, 32 Nodes in Selene" (DGX A100): 2565 s end-to-end without binning
// (bin size 512) and 1483 s with bin size 64, the default of DeepLearningExamples' PyTorch BERT
// phase-2 pre-training since its LDDL release (scripts/run_pretraining.sh, phase2_bin_size=64).
constexpr LoaderSpec kLoaders[] = {
    {"lddl-bin64", 2565.0 / 1483.0, 512},
};

const LoaderSpec* FindLoader(const std::string& name) {
  for (const LoaderSpec& l : kLoaders) {
    if (name == l.name) return &l;
  }
  return nullptr;
}

ThroughputResult Predict(const ThroughputRow& row, const ModelCatalog& models,
                         const ModelEfficiency& efficiency, const HardwareCatalog& hardware,
                         TopologyCache& cache) {
  const SystemSpec* system = FindSystem(row.system);
  if (system == nullptr) throw InputError("row " + row.id + ": unknown system " + row.system);
  const GpuSpec& gpu = hardware.gpu(hardware.Require(row.gpu, "row " + row.id, "gpu"));
  const ModelSpec model = RowModel(row, models);
  ThroughputOptions options;
  options.settings = RowSettings(row);
  options.framework = &efficiency.FrameworkNamed(row.framework);
  options.distributed_optimizer = row.distributed_optimizer;
  options.tp_comm_overlap = row.tp_comm_overlap;
  options.allreduce_after_backward = row.allreduce == "post" || row.allreduce == "post-fp16";
  if (row.allreduce == "post-fp16") options.allreduce_bytes_per_parameter = 2;
  options.finetune = row.task == "finetune";
  const ThroughputModel tm(model, efficiency, gpu, hardware, {row.tp, row.pp}, options);
  const DataParallelSetup dp = CommSetupFor(row, *system, cache);
  ThroughputResult r;
  r.row = &row;
  r.estimate = tm.Estimate(row.micro_batch, row.accumulation, dp, model.TypicalNoiseScale());
  if (const LoaderSpec* loader = FindLoader(row.loader)) r.loader_speedup = loader->speedup;
  // The MFU stays the estimate's: a binned sample carries 1 / speedup of the padded FLOPs.
  r.predicted_samples = r.estimate.samples_per_second * r.loader_speedup;
  r.measured_samples = MeasuredSamples(row);
  r.error = r.predicted_samples / r.measured_samples - 1.0;
  r.predicted_mfu = r.estimate.mfu;
  r.measured_mfu = r.predicted_mfu * r.measured_samples / r.predicted_samples;
  MemoryOptions mo;
  mo.settings = options.settings;
  mo.framework = options.framework;
  mo.optimizer_shards = row.distributed_optimizer ? dp.replicas : 1;
  mo.accumulating = row.accumulation > 1;
  const MemoryBreakdown mem = MemoryPerGpu(model, efficiency, {row.tp, row.pp}, gpu, mo);
  r.max_batch = MaxBatch(mem, GpuMemoryBytes(gpu));
  r.fits = r.max_batch >= row.micro_batch;
  return r;
}

bool IsReferenceStack(const std::string& framework) {
  return framework == "pytorch" || framework == "megatron" || framework == "megatron-core";
}

}  // namespace

ValidationData ParseValidationData(const std::string& throughput_csv,
                                   const std::string& throughput_origin,
                                   const std::string& memory_csv,
                                   const std::string& memory_origin) {
  ValidationData data;
  {
    const auto records = ParseCsv(throughput_csv, throughput_origin);
    if (records.empty()) throw InputError(throughput_origin, 1, 1, "a header line");
    const Columns c(
        records[0], throughput_origin,
        {"id",         "split",     "group", "model",       "layers",       "hidden",    "heads",
         "vocab",      "sequence",  "image", "precision",   "framework",    "system",    "gpu",
         "gpus",       "tp",        "pp",    "micro_batch", "accumulation", "recompute", "dist_opt",
         "tp_overlap", "allreduce", "task",  "measured",    "unit",         "source"});
    std::set<std::string> ids;
    for (size_t i = 1; i < records.size(); ++i) {
      const CsvRecord& r = records[i];
      ThroughputRow row;
      row.line = r.line;
      row.id = c.Text(r, "id");
      if (row.id.empty() || !ids.insert(row.id).second) {
        throw InputError(throughput_origin, r.line, 1, "a unique, non-empty id");
      }
      c.OneOf(r, "split", {"calibration", "heldout", "fresh"});
      row.split = c.Text(r, "split");
      row.group = c.Text(r, "group");
      row.model = c.Text(r, "model");
      const bool gpt = row.model == "GPT";
      row.layers = c.Int(r, "layers", gpt ? 1 : 0, !gpt);
      row.hidden = c.Int(r, "hidden", gpt ? 1 : 0, !gpt);
      row.heads = c.Int(r, "heads", gpt ? 1 : 0, !gpt);
      row.vocab = c.Int(r, "vocab", gpt ? 1 : 0, !gpt);
      row.sequence = c.Int(r, "sequence", gpt ? 1 : 0, !gpt);
      row.image = c.Int(r, "image", 0, true);
      c.OneOf(r, "precision", {"fp32", "tf32", "mixed-fp16", "mixed-bf16"});
      row.precision = c.Text(r, "precision");
      row.framework = c.Text(r, "framework");
      row.system = c.Text(r, "system");
      row.gpu = c.Text(r, "gpu");
      row.gpus = c.Int(r, "gpus", 1, false);
      row.tp = c.Int(r, "tp", 1, false);
      row.pp = c.Int(r, "pp", 1, false);
      row.micro_batch = c.Int(r, "micro_batch", 1, false);
      row.accumulation = c.Int(r, "accumulation", 1, false);
      c.OneOf(r, "recompute", {"", "none", "selective", "full"});
      row.recompute = c.Text(r, "recompute");
      c.OneOf(r, "dist_opt", {"0", "1"});
      row.distributed_optimizer = c.Text(r, "dist_opt") == "1";
      c.OneOf(r, "tp_overlap", {"0", "1"});
      row.tp_comm_overlap = c.Text(r, "tp_overlap") == "1";
      c.OneOf(r, "allreduce", {"", "overlap", "post", "post-fp16"});
      row.allreduce = c.Text(r, "allreduce");
      c.OneOf(r, "task", {"pretrain", "finetune"});
      row.task = c.Text(r, "task");
      // Optional column: files written before it existed describe loaders that pad to `sequence`.
      if (c.Has("loader")) {
        std::vector<std::string> loaders = {""};
        for (const LoaderSpec& l : kLoaders) loaders.emplace_back(l.name);
        c.OneOf(r, "loader", loaders);
        row.loader = c.Text(r, "loader");
        const LoaderSpec* loader = FindLoader(row.loader);
        if (loader != nullptr && (row.sequence != loader->sequence || row.task != "pretrain")) {
          throw InputError(throughput_origin, r.line, c.Column(r, "loader"),
                           "loader " + row.loader + " only on pre-training rows of sequence " +
                               std::to_string(loader->sequence) + ", where its speedup was " +
                               "measured (" + row.id + ")");
        }
      }
      row.measured = c.Positive(r, "measured");
      c.OneOf(r, "unit", {"samples/s", "model-TFLOP/s/GPU", "hw-TFLOP/s/GPU"});
      row.unit = c.Text(r, "unit");
      if (row.unit != "samples/s" && !gpt) {
        throw InputError(throughput_origin, r.line, 1, "unit samples/s for a catalog model");
      }
      row.source = c.Text(r, "source");
      if (row.source.empty()) throw InputError(throughput_origin, r.line, 1, "a source");
      if (row.gpus % (row.tp * row.pp) != 0) {
        throw InputError(throughput_origin, r.line, 1,
                         "gpus a multiple of tp x pp (" + row.id + ")");
      }
      if (FindSystem(row.system) == nullptr) {
        throw InputError(throughput_origin, r.line, 1,
                         "system dgx1, dgx2, dgx-a100 or dgx-h100, got \"" + row.system + "\"");
      }
      data.throughput.push_back(std::move(row));
    }
  }
  {
    const auto records = ParseCsv(memory_csv, memory_origin);
    if (records.empty()) throw InputError(memory_origin, 1, 1, "a header line");
    const Columns c(records[0], memory_origin,
                    {"id", "split", "model", "sequence", "image", "precision", "framework", "gpu",
                     "micro_batch_fits", "micro_batch_oom", "accumulation", "source"});
    for (size_t i = 1; i < records.size(); ++i) {
      const CsvRecord& r = records[i];
      MemoryRow row;
      row.line = r.line;
      row.id = c.Text(r, "id");
      c.OneOf(r, "split", {"calibration", "heldout", "fresh"});
      row.split = c.Text(r, "split");
      row.model = c.Text(r, "model");
      row.sequence = c.Int(r, "sequence", 0, true);
      row.image = c.Int(r, "image", 0, true);
      c.OneOf(r, "precision", {"fp32", "tf32", "mixed-fp16", "mixed-bf16"});
      row.precision = c.Text(r, "precision");
      row.framework = c.Text(r, "framework");
      row.gpu = c.Text(r, "gpu");
      row.fits = c.Int(r, "micro_batch_fits", 1, false);
      row.oom = c.Int(r, "micro_batch_oom", 0, true);
      if (row.oom != 0 && row.oom <= row.fits) {
        throw InputError(memory_origin, r.line, 1, "micro_batch_oom > micro_batch_fits");
      }
      row.accumulation = c.Int(r, "accumulation", 1, false);
      row.source = c.Text(r, "source");
      if (row.source.empty()) throw InputError(memory_origin, r.line, 1, "a source");
      data.memory.push_back(std::move(row));
    }
  }
  return data;
}

const ValidationData& DefaultValidationData() {
  static const ValidationData data =
      ParseValidationData(kValidationThroughputCsv, "<built-in validation/throughput.csv>",
                          kValidationMemoryCsv, "<built-in validation/memory.csv>");
  return data;
}

std::vector<ThroughputResult> ValidateThroughput(const ValidationData& data,
                                                 const ModelCatalog& models,
                                                 const HardwareCatalog& hardware) {
  TopologyCache cache(hardware);
  std::vector<ThroughputResult> out;
  for (const ThroughputRow& row : data.throughput) {
    out.push_back(Predict(row, models, models.efficiency(), hardware, cache));
  }
  return out;
}

std::vector<MemoryResult> ValidateMemory(const ValidationData& data, const ModelCatalog& models,
                                         const HardwareCatalog& hardware) {
  std::vector<MemoryResult> out;
  const ModelEfficiency& efficiency = models.efficiency();
  for (const MemoryRow& row : data.memory) {
    const ModelSpec& model = models.Require(row.model);
    const GpuSpec& gpu = hardware.gpu(hardware.Require(row.gpu, "row " + row.id, "gpu"));
    MemoryOptions mo;
    mo.settings.precision = ParsePrecision(row.precision);
    mo.settings.sequence_length = row.sequence > 0 ? row.sequence : row.image;
    mo.framework = &efficiency.FrameworkNamed(row.framework);
    mo.accumulating = row.accumulation > 1;
    MemoryResult r;
    r.row = &row;
    r.max_batch = MaxBatch(MemoryPerGpu(model, efficiency, {}, gpu, mo), GpuMemoryBytes(gpu));
    r.respected = r.max_batch >= row.fits && (row.oom == 0 || r.max_batch < row.oom);
    out.push_back(r);
  }
  return out;
}

ErrorSummary SummarizeAll(const std::vector<ThroughputResult>& results, const std::string& key) {
  ErrorSummary s;
  s.key = key;
  s.rows = static_cast<int>(results.size());
  std::vector<double> abs_errors;
  double sum = 0;
  for (const auto& r : results) {
    abs_errors.push_back(std::fabs(r.error));
    sum += r.error;
  }
  if (!abs_errors.empty()) {
    s.median_abs = Median(abs_errors);
    s.p90_abs = Percentile(abs_errors, 0.9);
  }
  s.worst_abs = abs_errors.empty() ? 0 : *std::max_element(abs_errors.begin(), abs_errors.end());
  s.mean_signed = results.empty() ? 0 : sum / results.size();
  return s;
}

std::string ScaleBucket(int gpus) {
  if (gpus <= 1) return "1";
  if (gpus <= 8) return "2-8";
  if (gpus <= 64) return "9-64";
  if (gpus <= 512) return "65-512";
  return ">512";
}

ModelEfficiency FitEfficiency(const ValidationData& data, const ModelCatalog& models,
                              const HardwareCatalog& hardware) {
  ModelEfficiency eff = models.efficiency();
  // The stacks' factors are refitted from scratch at the finest key (class:chip:precision group).
  for (auto& [name, framework] : eff.frameworks) {
    framework.throughput.clear();
    framework.finetune.clear();
    framework.layer_overhead_seconds.clear();
  }
  TopologyCache cache(hardware);
  std::vector<const ThroughputRow*> rows;
  for (const auto& row : data.throughput) {
    if (row.split == "calibration") rows.push_back(&row);
  }
  struct Cell {
    std::string chip, cls, group;
  };
  auto cell_of = [&](const ThroughputRow& row) {
    const GpuSpec& gpu = hardware.gpu(hardware.Require(row.gpu, "row " + row.id, "gpu"));
    const ModelSpec model = RowModel(row, models);
    return Cell{gpu.chip, model.EfficiencyClass(), PrecisionGroup(*ParsePrecision(row.precision))};
  };
  auto ratio = [&](const ThroughputRow& row) {
    const ThroughputResult r = Predict(row, models, eff, hardware, cache);
    return r.measured_samples / r.predicted_samples;
  };
  // Cells with rows of a reference stack; the other stacks' rows fit their own factors there.
  std::set<std::string> reference_cells;
  for (const auto* row : rows) {
    if (IsReferenceStack(row->framework)) {
      const Cell c = cell_of(*row);
      reference_cells.insert(c.chip + "/" + c.cls + "/" + c.group);
    }
  }
  auto run_rounds = [&] {
    for (int round = 0; round < 8; ++round) {
      // 1. Achieved fractions of the reference stacks (one-GPU rows; decoders have none, so their
      //    rows of any size), then of cells only other stacks measured.
      std::map<std::string, std::vector<double>> by_cell, other_cells;
      std::map<std::string, std::vector<double>> by_stack, by_finetune;
      std::map<std::string, std::vector<double>> cv_rows;
      for (const auto* row : rows) {
        const Cell c = cell_of(*row);
        const std::string key = c.chip + "/" + c.cls + "/" + c.group;
        const double q = ratio(*row);
        if (row->task == "finetune") {
          if (row->gpus == 1) {
            by_finetune[row->framework + "/" + c.cls].push_back(q);
          }
          continue;
        }
        if (IsReferenceStack(row->framework)) {
          if (row->gpus == 1 || c.cls == "decoder") {
            by_cell[key].push_back(q);
          } else {
            cv_rows[c.cls].push_back(q);
          }
        } else if (row->gpus == 1 && row->task == "pretrain") {
          if (reference_cells.count(key)) {
            by_stack[row->framework + "/" + c.cls + ":" + c.chip + ":" + c.group].push_back(q);
          } else {
            other_cells[key].push_back(q);
          }
        }
      }
      for (const auto& [key, qs] : by_cell) {
        const auto a = key.find('/'), b = key.rfind('/');
        eff.chips[key.substr(0, a)][key.substr(a + 1, b - a - 1)][key.substr(b + 1)] *= Median(qs);
      }
      for (const auto& [key, qs] : by_stack) {
        const auto a = key.find('/');
        double& f = eff.frameworks[key.substr(0, a)].throughput[key.substr(a + 1)];
        f = (f > 0 ? f : 1.0) * Median(qs);
      }
      for (const auto& [key, qs] : by_finetune) {
        const auto a = key.find('/');
        double& f = eff.frameworks[key.substr(0, a)].finetune[key.substr(a + 1)];
        f = (f > 0 ? f : 1.0) * Median(qs);
      }
      for (const auto& [key, qs] : other_cells) {
        const auto a = key.find('/'), b = key.rfind('/');
        double& u = eff.chips[key.substr(0, a)][key.substr(a + 1, b - a - 1)][key.substr(b + 1)];
        u = (u > 0 ? u : 0.3) * Median(qs);
      }
      // 2. Step-time variability from the reference stacks' multi-GPU calibration rows: a
      //    multiplicative step on 1 + cv x sqrt(2 ln n) toward a median ratio of 1.
      for (const auto& [cls, qs] : cv_rows) {
        const double m = Median(qs);
        double& cv = eff.step_time_cv[cls];
        const double factor = 1.0 + cv * std::sqrt(2.0 * std::log(8.0));
        cv = std::max(0.0, (factor / m - 1.0) / std::sqrt(2.0 * std::log(8.0)));
      }
    }
  };
  run_rounds();
  // 3. Each other stack's per-layer overhead per class (Framework::layer_overhead_seconds): the
  //    multiple of the reference's tau, on a fixed grid, whose refitted tables give the smallest
  //    sum of squared log ratios over the stack's calibration rows. Its rows of different
  //    micro-batch sizes separate the overhead from the throughput factor.
  std::map<std::string, std::set<std::string>> stack_classes;
  for (const auto* row : rows) {
    if (!IsReferenceStack(row->framework)) stack_classes[row->framework].insert(cell_of(*row).cls);
  }
  for (const auto& [stack, classes] : stack_classes) {
    for (const std::string& cls : classes) {
      const double reference_tau =
          eff.layer_overhead_seconds.count(cls) ? eff.layer_overhead_seconds.at(cls) : 0.0;
      if (reference_tau <= 0) continue;
      double best_multiple = 1, best_cost = -1;
      for (double multiple : {0.5, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0}) {
        eff.frameworks[stack].layer_overhead_seconds[cls] = multiple * reference_tau;
        run_rounds();
        double cost = 0;
        for (const auto* row : rows) {
          if (row->framework != stack || cell_of(*row).cls != cls) continue;
          const double q = std::log(ratio(*row));
          cost += q * q;
        }
        if (best_cost < 0 || cost < best_cost - 1e-12) {
          best_cost = cost;
          best_multiple = multiple;
        }
      }
      eff.frameworks[stack].layer_overhead_seconds[cls] = best_multiple * reference_tau;
      run_rounds();
    }
  }
  // Decoders have no single-GPU rows to separate variability from efficiency: they take the
  // encoders' variability.
  if (eff.step_time_cv.count("encoder")) eff.step_time_cv["decoder"] = eff.step_time_cv["encoder"];
  return eff;
}

std::string EfficiencyJson(const ModelEfficiency& e) {
  std::ostringstream out;
  char buf[64];
  auto num = [&](double v) {
    std::snprintf(buf, sizeof buf, "%.4g", v);
    return std::string(buf);
  };
  out << "{\"chips\": {";
  bool first_chip = true;
  for (const auto& [chip, classes] : e.chips) {
    out << (first_chip ? "\n  " : ",\n  ") << "\"" << chip << "\": {";
    first_chip = false;
    bool first_cls = true;
    for (const auto& [cls, groups] : classes) {
      out << (first_cls ? "" : ", ") << "\"" << cls << "\": {";
      first_cls = false;
      bool first = true;
      for (const auto& [group, u] : groups) {
        out << (first ? "" : ", ") << "\"" << group << "\": " << num(u);
        first = false;
      }
      out << "}";
    }
    out << "}";
  }
  out << "},\n\"step_time_cv\": {";
  bool first = true;
  for (const auto& [cls, cv] : e.step_time_cv) {
    out << (first ? "" : ", ") << "\"" << cls << "\": " << num(cv);
    first = false;
  }
  out << "},\n\"framework_throughput\": {";
  first = true;
  for (const auto& [name, f] : e.frameworks) {
    if (f.throughput.empty()) continue;
    out << (first ? "" : ", ") << "\"" << name << "\": {";
    first = false;
    bool inner = true;
    for (const auto& [cls, v] : f.throughput) {
      out << (inner ? "" : ", ") << "\"" << cls << "\": " << num(v);
      inner = false;
    }
    out << "}";
  }
  out << "},\n\"framework_layer_overhead_seconds\": {";
  first = true;
  for (const auto& [name, f] : e.frameworks) {
    if (f.layer_overhead_seconds.empty()) continue;
    out << (first ? "" : ", ") << "\"" << name << "\": {";
    first = false;
    bool inner = true;
    for (const auto& [cls, v] : f.layer_overhead_seconds) {
      out << (inner ? "" : ", ") << "\"" << cls << "\": " << num(v);
      inner = false;
    }
    out << "}";
  }
  out << "},\n\"framework_finetune\": {";
  first = true;
  for (const auto& [name, f] : e.frameworks) {
    if (f.finetune.empty()) continue;
    out << (first ? "" : ", ") << "\"" << name << "\": {";
    first = false;
    bool inner = true;
    for (const auto& [cls, v] : f.finetune) {
      out << (inner ? "" : ", ") << "\"" << cls << "\": " << num(v);
      inner = false;
    }
    out << "}";
  }
  out << "}}\n";
  return out.str();
}

}  // namespace clustersim
