// openb: Alibaba 2023 GPU pod lists (cluster-trace-gpu-v2023, `openb_pod_list_*.csv`), header
// `name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,
// deletion_time,scheduled_time` (columns in any order). Detected by a header naming name,
// cpu_milli, num_gpu and gpu_milli. Mapping:
//   job_id = name; trace_status = pod_phase (Running, Succeeded, Failed, Pending);
//   submit_time = creation_time (seconds from the trace start, kept as given);
//   duration = deletion_time - scheduled_time; a pod never scheduled (Pending, empty
//   scheduled_time) gets deletion_time - creation_time, its whole lifetime. The deletion_time of a
//   Running pod is the end of the trace: its duration is censored there, and its trace_status
//   "Running" records that;
//   gpus = num_gpu; gpu_milli = gpu_milli when num_gpu == 1 and gpu_milli < 1000 (a share of one
//   GPU); gpu_milli must be 0 for CPU pods (num_gpu 0: a CPU-only job,
//   docs/resources.md#cpu-only-jobs, or rejected by the engine with a reason), 1..1000 for one
//   GPU and 1000 for several;
//   cpu_milli = cpu_milli; memory_mib = memory_mib (both the pod's host demands,
//   docs/resources.md);
//   recorded schedule: recorded_start = scheduled_time (absent for a pod never scheduled),
//   recorded_end = deletion_time (a Pending pod was withdrawn then; censored for Running pods);
//   gpu_type = gpu_spec, each '|'-separated model mapped to its catalog name (openb_models.h:
//   V100M16 -> V100-16GB, V100M32 -> V100-32GB, P100 -> P100-16GB, T4 -> T4-16GB; A10, G2, G3
//   kept as named), repeats removed; empty = any type. A model outside that list is an error;
//   priority_class = qos (LS, BE, Burstable, Guaranteed), its level from --priority-map or the
//   built-in table (sim/engine/priority_class.h: BE 0, Burstable 1, LS 2, Guaranteed 3).
// The multigpu50 list has no time columns: it is a packing snapshot, not an arrival log, and the
// reader reports that it cannot be replayed instead of inventing times.
#include <algorithm>

#include "sim/util/error.h"
#include "workloads/openb_models.h"
#include "workloads/reader.h"
#include "workloads/trace_csv.h"

namespace clustersim {
namespace {

enum Column {
  kName,
  kCpuMilli,
  kNumGpu,
  kGpuMilli,
  kCreation,
  kDeletion,
  kGpuSpec,
  kPodPhase,
  kScheduled,
  kMemoryMib,
  kQos
};
const char* const kColumns =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
    "deletion_time,scheduled_time";

// Maps "V100M16|V100M32" to "V100-16GB|V100-32GB" (first-appearance order, no repeats).
std::string MapGpuSpec(const CsvField& spec, const CsvFieldParser& parse) {
  std::vector<std::string_view> names;
  for (std::string_view model : SplitPlain(spec.text, '|')) {
    const OpenbModel* m = FindOpenbModel(model);
    if (!m) {
      std::vector<std::string_view> known;
      for (const OpenbModel& k : kOpenbModels) known.push_back(k.openb);
      parse.Fail(spec, "gpu_spec: unknown GPU model \"" + std::string(model) +
                           "\"; expected models separated by '|' among " + JoinNames(known, ", "));
    }
    if (std::find(names.begin(), names.end(), m->name) == names.end()) names.push_back(m->name);
  }
  return JoinNames(names, "|");
}

void ReadOpenb(const std::string& path, JobSink* sink) {
  LineReader reader(path);
  CsvSplitter splitter;
  std::string_view line;
  while (reader.Next(&line) && line.find_first_not_of(" \t") == std::string_view::npos) {
  }
  const std::vector<CsvField>& header_fields = splitter.Split(line, path, reader.line_number());
  if (!HeaderHasColumns(line, {"creation_time"}) || !HeaderHasColumns(line, {"deletion_time"})) {
    throw InputError(path, static_cast<int>(reader.line_number()), 1,
                     "this openb pod list has no creation_time/deletion_time columns (like "
                     "openb_pod_list_multigpu50.csv): it has no arrival or run times and cannot "
                     "be replayed as a trace; expected the columns " +
                         std::string(kColumns));
  }
  const CsvHeader header(header_fields,
                         {"name", "cpu_milli", "num_gpu", "gpu_milli", "creation_time",
                          "deletion_time", "gpu_spec", "pod_phase", "scheduled_time", "memory_mib",
                          "qos"},
                         6, path, reader.line_number(), kColumns);
  while (reader.Next(&line)) {
    if (line.empty()) continue;
    const int64_t n = reader.line_number();
    const std::vector<CsvField>& row = splitter.Split(line, path, n);
    header.CheckWidth(row, line, path, n);
    const CsvFieldParser parse(path, n);
    auto field = [&](Column c) -> const CsvField* {
      return header.position(c) >= 0 ? &row[header.position(c)] : nullptr;
    };
    Job job;
    job.line = n;
    job.id = parse.Text(*field(kName), "name");
    job.cpu_milli =
        static_cast<int>(parse.Integer(*field(kCpuMilli), "cpu_milli", 0, 2'000'000'000));
    if (const CsvField* memory = field(kMemoryMib); memory && !memory->text.empty()) {
      job.memory_mib = static_cast<int>(parse.Integer(*memory, "memory_mib", 0, 2'000'000'000));
    }
    job.gpus = static_cast<int>(parse.Integer(*field(kNumGpu), "num_gpu", 0, 1'000'000));
    const CsvField& milli_field = *field(kGpuMilli);
    const int64_t milli = parse.Integer(milli_field, "gpu_milli", 0, 1000);
    if (job.gpus == 0 && milli != 0) {
      parse.Fail(milli_field,
                 "gpu_milli: expected 0 for a pod of 0 GPUs, got " + std::string(milli_field.text));
    }
    if (job.gpus == 1 && milli == 0) {
      parse.Fail(milli_field, "gpu_milli: expected 1..1000 (thousandths of the one GPU), got 0");
    }
    if (job.gpus > 1 && milli != 1000) {
      parse.Fail(milli_field, "gpu_milli: expected 1000 for a pod of " + std::to_string(job.gpus) +
                                  " GPUs (only single-GPU pods share a GPU), got " +
                                  std::string(milli_field.text));
    }
    if (job.gpus == 1 && milli < 1000) job.gpu_milli = static_cast<int>(milli);
    job.submit_time = parse.NonNegative(*field(kCreation), "creation_time");
    const double deletion = parse.NonNegative(*field(kDeletion), "deletion_time");
    double start = job.submit_time;
    const CsvField* scheduled = field(kScheduled);
    const bool was_scheduled = scheduled && !CsvFieldParser::IsMissing(scheduled->text);
    if (was_scheduled) {
      start = parse.NonNegative(*scheduled, "scheduled_time");
      if (start < job.submit_time) {
        parse.Fail(*scheduled, "scheduled_time: expected a time >= creation_time");
      }
    }
    if (deletion < start) {
      parse.Fail(*field(kDeletion), std::string("deletion_time: expected a time >= ") +
                                        (was_scheduled ? "scheduled_time" : "creation_time"));
    }
    job.duration = deletion - start;
    // The recorded schedule: scheduled at scheduled_time, gone at deletion_time (a pod never
    // scheduled was withdrawn then; a Running pod's deletion_time is the end of the trace).
    if (was_scheduled) job.recorded_start = start;
    job.recorded_end = deletion;
    if (const CsvField* spec = field(kGpuSpec); spec && !spec->text.empty()) {
      job.gpu_type = MapGpuSpec(*spec, parse);
      job.gpu_type_column = spec->column;
    }
    if (const CsvField* phase = field(kPodPhase)) job.trace_status = phase->text;
    if (const CsvField* qos = field(kQos); qos && !CsvFieldParser::IsMissing(qos->text)) {
      job.priority_class = qos->text;
    }
    sink->Add(std::move(job));
  }
}

}  // namespace
}  // namespace clustersim

CLUSTERSIM_REGISTER_TRACE_READER(
    openb, "openb",
    "Alibaba 2023 openb pod list: name,cpu_milli,memory_mib,num_gpu,"
    "gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,"
    "scheduled_time",
    [](const std::string&, const std::string& first) {
      return clustersim::HeaderHasColumns(first, {"name", "cpu_milli", "num_gpu", "gpu_milli"});
    },
    clustersim::ReadOpenb);
