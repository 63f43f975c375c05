// pai2020: Alibaba PAI 2020 (cluster-trace-gpu-v2020), two tables read together.
// The file given is the job table `job_name,inst_id,user,status,start_time,end_time`; the task
// table `job_name,task_name,inst_num,status,start_time,end_time,plan_cpu,plan_mem,plan_gpu,
// gpu_type` is the file beside it whose name is the job table's with its last "job" replaced by
// "task" (pai_job_table.csv -> pai_task_table.csv; if that is missing, the name with ".gz" added
// or removed). The published tables have no header line (it is in pai_*_table.header): each
// table may start with its header line (prepend it with
// `cat pai_job_table.header pai_job_table.csv > ...`) or not; without one, the columns are in the
// published order. Detected by a job-table header, or a file named pai_job_table.csv (or
// pai_job_table.csv.gz) whose first line has 6 fields. Times are seconds >= 0 (anonymized epoch
// offsets); missing values are empty. Mapping (one job per job-table row; its task rows, matched by
// job_name, are aggregated):
//   job_id = job_name; user; trace_status = status (Terminated, Failed, Running, Waiting);
//   submit_time = job start_time (the submission) minus the earliest one in the job table;
//   GPUs: total = sum over tasks of inst_num x plan_gpu / 100 (plan_gpu is a percentage of one
//   GPU; empty = 0). total 0 -> gpus 0 (a CPU-only job, rejected by the engine with a reason);
//   0 < total < 1 -> gpus 1 with gpu_milli = round(1000 x total); total >= 1 -> gpus =
//   ceil(total) whole GPUs (e.g. 3 instances of 50% -> 2 GPUs);
//   cpu_milli = sum of inst_num x plan_cpu x 10 (plan_cpu is a percentage of one core);
//   memory_mib = sum of inst_num x plan_mem x 1024 (plan_mem is GB per instance, read as GiB);
//   gpu_type: the types of the tasks with plan_gpu > 0, mapped V100 -> V100-16GB,
//   V100M32 -> V100-32GB, P100 -> P100-16GB, T4 -> T4-16GB, MISC (older K40m/K80/M60) or empty ->
//   any; several types -> any of them ('|'); any other value is an error. gpu_type is the type a
//   task ran on, so it reproduces the original placement constraint;
//   duration = latest task end_time - earliest task start_time (task start is the launch, so the
//   wait before it is left to the simulator). If the job has no end_time, or a started task has
//   none, the job was still running when the trace ended: its end is the latest time in either
//   table (censored; its status, normally Running, says so). No started task -> duration 0;
//   a job with no task rows gets gpus 0, duration 0 and trace_status "<status>:no-tasks";
//   recorded schedule: recorded_start = the earliest task start_time, recorded_end = that end
//   (latest task end, or the censored end) — shifted like submit_time;
//   task rows whose job_name is not in the job table have no submission time and are not used;
//   inst_id and the task status are not used.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <unordered_map>

#include "sim/util/error.h"
#include "workloads/reader.h"
#include "workloads/trace_csv.h"

namespace clustersim {
namespace {

enum JobColumn { kJobName, kInstId, kUser, kJobStatus, kJobStart, kJobEnd };
const std::vector<std::string_view> kJobColumns = {"job_name", "inst_id",    "user",
                                                   "status",   "start_time", "end_time"};
enum TaskColumn {
  kTaskJob,
  kTaskName,
  kInstNum,
  kTaskStatus,
  kTaskStart,
  kTaskEnd,
  kPlanCpu,
  kPlanMem,
  kPlanGpu,
  kGpuType
};
const std::vector<std::string_view> kTaskColumns = {
    "job_name", "task_name", "inst_num", "status",   "start_time",
    "end_time", "plan_cpu",  "plan_mem", "plan_gpu", "gpu_type"};

// PAI gpu_type -> catalog name; an empty name = any type.
struct PaiType {
  std::string_view pai;
  std::string_view name;
};
constexpr PaiType kPaiTypes[] = {{"V100", "V100-16GB"},
                                 {"V100M32", "V100-32GB"},
                                 {"P100", "P100-16GB"},
                                 {"T4", "T4-16GB"},
                                 {"MISC", ""}};
constexpr uint8_t kAnyType = 1u << 7;

struct Aggregate {
  double gpus = 0;         // sum of inst_num x plan_gpu / 100
  double cpu_percent = 0;  // sum of inst_num x plan_cpu
  double memory_gib = 0;   // sum of inst_num x plan_mem
  double run_start = std::numeric_limits<double>::infinity();
  double run_end = -std::numeric_limits<double>::infinity();
  uint8_t types = 0;  // bit i = kPaiTypes[i]; kAnyType = unconstrained
  bool has_tasks = false;
  bool open = false;  // a started task without end time, or no job end time
};

// A table with or without its header line: the header's positions, or the published order.
class PaiTable {
 public:
  PaiTable(const std::string& path, const std::vector<std::string_view>& columns,
           std::string_view signature_a, std::string_view signature_b)
      : path_(path), reader_(path) {
    while (reader_.Next(&line_) && line_.find_first_not_of(" \t") == std::string_view::npos) {
    }
    positions_.resize(columns.size());
    if (HeaderHasColumns(line_, {signature_a, signature_b})) {
      const CsvHeader header(splitter_.Split(line_, path, reader_.line_number()), columns,
                             columns.size(), path, reader_.line_number(), JoinNames(columns));
      for (size_t i = 0; i < columns.size(); ++i) positions_[i] = header.position(i);
      width_ = header.width();
      pending_ = false;
    } else {
      for (size_t i = 0; i < columns.size(); ++i) positions_[i] = static_cast<int>(i);
      width_ = columns.size();
      pending_ = !line_.empty();  // the first line is data
    }
    columns_ = &columns;
  }

  // Returns the next row's fields (in the table's column order) or nullptr at the end.
  const std::vector<CsvField>* Next() {
    if (pending_) {
      pending_ = false;
    } else {
      do {
        if (!reader_.Next(&line_)) return nullptr;
      } while (line_.empty());
    }
    const std::vector<CsvField>& row = splitter_.Split(line_, path_, reader_.line_number());
    if (row.size() != width_) {
      const bool missing = row.size() < width_;
      throw InputError(path_, static_cast<int>(reader_.line_number()),
                       missing ? static_cast<int>(line_.size()) + 1 : row[width_].column,
                       std::string(missing ? "missing field(s)" : "extra field") + ": expected " +
                           std::to_string(width_) + " fields (" + JoinNames(*columns_) + "), got " +
                           std::to_string(row.size()));
    }
    ordered_.clear();
    for (int p : positions_) ordered_.push_back(row[p]);
    return &ordered_;
  }
  int64_t line_number() const { return reader_.line_number(); }

 private:
  const std::string& path_;
  LineReader reader_;
  CsvSplitter splitter_;
  std::string_view line_;
  std::vector<int> positions_;
  const std::vector<std::string_view>* columns_ = nullptr;
  size_t width_ = 0;
  bool pending_ = false;
  std::vector<CsvField> ordered_;
};

// "1.5e+300", "12": a figure for messages.
std::string Approximate(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6g", value);
  return buffer;
}

std::string TaskTablePath(const std::string& job_path) {
  const std::filesystem::path p(job_path);
  std::string name = p.filename().string();
  const size_t at = name.rfind("job");
  if (at == std::string::npos) {
    throw InputError(job_path, 0, 0,
                     "cannot locate the PAI task table: the job table's file name must contain "
                     "\"job\" (the task table is the file named with \"task\" in its place)");
  }
  name.replace(at, 3, "task");
  const std::filesystem::path task = p.parent_path() / name;
  // A gzip job table may sit beside a plain task table and the other way round.
  std::error_code error;
  if (!std::filesystem::exists(task, error)) {
    const std::string stem = task.string();
    const bool gz = stem.size() > 3 && stem.compare(stem.size() - 3, 3, ".gz") == 0;
    const std::string other = gz ? stem.substr(0, stem.size() - 3) : stem + ".gz";
    if (std::filesystem::exists(other, error)) return other;
  }
  return task.string();
}

// The job table is held whole: a job's GPUs, types and duration come from task rows that may
// appear anywhere in the task table, so no job is complete before that table is read.
void ReadPai2020(const std::string& path, JobSink* sink) {
  std::vector<Job> table;
  std::unordered_map<std::string, size_t> index;  // job_name -> position in table
  std::vector<Aggregate> aggregates;
  double trace_end = -std::numeric_limits<double>::infinity();

  PaiTable job_table(path, kJobColumns, "inst_id", "user");
  while (const std::vector<CsvField>* row = job_table.Next()) {
    const std::vector<CsvField>& f = *row;
    const int64_t n = job_table.line_number();
    const CsvFieldParser parse(path, n);
    Job job;
    job.line = n;
    job.id = parse.Text(f[kJobName], "job_name");
    job.user = f[kUser].text;
    job.trace_status = f[kJobStatus].text;
    job.submit_time = parse.NonNegative(f[kJobStart], "start_time");
    trace_end = std::max(trace_end, job.submit_time);
    Aggregate aggregate;
    if (CsvFieldParser::IsMissing(f[kJobEnd].text)) {
      aggregate.open = true;
    } else {
      trace_end = std::max(trace_end, parse.NonNegative(f[kJobEnd], "end_time"));
    }
    auto [it, inserted] = index.emplace(job.id, table.size());
    if (!inserted) {
      parse.Fail(f[kJobName], "duplicate job_name \"" + job.id + "\" (first on line " +
                                  std::to_string(table[it->second].line) + ")");
    }
    table.push_back(std::move(job));
    aggregates.push_back(aggregate);
  }

  const std::string task_path = TaskTablePath(path);
  if (!std::filesystem::exists(task_path)) {
    throw InputError(path, 0, 0,
                     "PAI 2020 task table not found: expected " + task_path +
                         " beside the job table (its name with the last \"job\" replaced by "
                         "\"task\")");
  }
  PaiTable task_table(task_path, kTaskColumns, "task_name", "plan_gpu");
  while (const std::vector<CsvField>* row = task_table.Next()) {
    const std::vector<CsvField>& f = *row;
    const CsvFieldParser parse(task_path, task_table.line_number());
    auto it = index.find(std::string(f[kTaskJob].text));
    if (it == index.end()) continue;  // no job row: no submission time (see the header comment)
    Aggregate& a = aggregates[it->second];
    a.has_tasks = true;
    const double inst_num =
        static_cast<double>(parse.Integer(f[kInstNum], "inst_num", 0, 1'000'000));
    const double plan_gpu = CsvFieldParser::IsMissing(f[kPlanGpu].text)
                                ? 0
                                : parse.NonNegative(f[kPlanGpu], "plan_gpu");
    const double plan_cpu = CsvFieldParser::IsMissing(f[kPlanCpu].text)
                                ? 0
                                : parse.NonNegative(f[kPlanCpu], "plan_cpu");
    const double plan_mem = CsvFieldParser::IsMissing(f[kPlanMem].text)
                                ? 0
                                : parse.NonNegative(f[kPlanMem], "plan_mem");
    a.gpus += inst_num * plan_gpu / 100;
    a.cpu_percent += inst_num * plan_cpu;
    a.memory_gib += inst_num * plan_mem;
    if (plan_gpu > 0 && inst_num > 0) {
      const std::string_view type = f[kGpuType].text;
      if (CsvFieldParser::IsMissing(type)) {
        a.types |= kAnyType;
      } else {
        size_t t = 0;
        while (t < std::size(kPaiTypes) && kPaiTypes[t].pai != type) ++t;
        if (t == std::size(kPaiTypes)) {
          parse.Fail(f[kGpuType], "gpu_type: expected V100, V100M32, P100, T4 or MISC, got \"" +
                                      std::string(type) + "\"");
        }
        a.types |= kPaiTypes[t].name.empty() ? kAnyType : static_cast<uint8_t>(1u << t);
      }
    }
    const bool has_start = !CsvFieldParser::IsMissing(f[kTaskStart].text);
    const bool has_end = !CsvFieldParser::IsMissing(f[kTaskEnd].text);
    if (has_start) {
      const double start = parse.NonNegative(f[kTaskStart], "start_time");
      a.run_start = std::min(a.run_start, start);
      trace_end = std::max(trace_end, start);
      if (has_end) {
        const double end = parse.NonNegative(f[kTaskEnd], "end_time");
        if (end < start) parse.Fail(f[kTaskEnd], "end_time: expected a time >= start_time");
        a.run_end = std::max(a.run_end, end);
        trace_end = std::max(trace_end, end);
      } else {
        a.open = true;
      }
    }
  }

  for (size_t i = 0; i < table.size(); ++i) {
    Job& job = table[i];
    const Aggregate& a = aggregates[i];
    if (!a.has_tasks) {
      job.trace_status = job.trace_status.str() + ":no-tasks";
      continue;
    }
    // Limits as the other readers' (gpus <= 1e6, cpu_milli < 2^31): a larger sum is an error at
    // the job's row, never a clamped or overflowed value.
    if (a.gpus > 1'000'000) {
      throw InputError(path, static_cast<int>(job.line), 1,
                       "job_name " + job.id + ": its tasks ask for " + Approximate(a.gpus) +
                           " GPUs (sum of inst_num x plan_gpu / 100): expected at most 1000000");
    }
    if (a.cpu_percent * 10 > 2'000'000'000) {
      throw InputError(path, static_cast<int>(job.line), 1,
                       "job_name " + job.id + ": its tasks ask for " +
                           Approximate(a.cpu_percent / 100) +
                           " cores (sum of inst_num x plan_cpu / 100): expected at most 2000000");
    }
    if (a.memory_gib * 1024 > 2'000'000'000) {
      throw InputError(path, static_cast<int>(job.line), 1,
                       "job_name " + job.id + ": its tasks ask for " + Approximate(a.memory_gib) +
                           " GB of memory (sum of inst_num x plan_mem): expected at most "
                           "1953125");
    }
    if (a.gpus > 0 && a.gpus < 1) {
      const int milli = static_cast<int>(std::lround(a.gpus * 1000));
      job.gpus = 1;
      job.gpu_milli = milli >= 1000 ? 0 : std::max(milli, 1);
    } else {
      job.gpus = static_cast<int>(std::ceil(a.gpus - 1e-9));
    }
    job.cpu_milli = static_cast<int>(std::lround(a.cpu_percent * 10));
    job.memory_mib = static_cast<int>(std::lround(a.memory_gib * 1024));
    if (a.types != 0 && !(a.types & kAnyType)) {
      std::string types;
      for (size_t t = 0; t < std::size(kPaiTypes); ++t) {
        if (a.types & (1u << t))
          types += (types.empty() ? "" : "|") + std::string(kPaiTypes[t].name);
      }
      job.gpu_type = types;
    }
    if (std::isfinite(a.run_start)) {
      const double end = a.open ? trace_end : a.run_end;
      job.duration = end - a.run_start;  // >= 0: the earliest-started task ended, or open
      job.recorded_start = a.run_start;
      job.recorded_end = end;
    }
  }
  for (Job& job : table) sink->Add(std::move(job));
}

bool IsPaiJobTable(const std::string& path, const std::string& first) {
  if (HeaderHasColumns(first, {"job_name", "inst_id", "user", "status", "start_time"})) return true;
  const std::filesystem::path name = std::filesystem::path(path).filename();
  return (name == "pai_job_table.csv" || name == "pai_job_table.csv.gz") &&
         SplitPlain(first).size() == kJobColumns.size();
}

}  // namespace
}  // namespace clustersim

CLUSTERSIM_REGISTER_TRACE_READER(pai2020, "pai2020",
                                 "Alibaba PAI 2020 job table (job_name,inst_id,user,status,"
                                 "start_time,end_time) with the task table beside it",
                                 clustersim::IsPaiJobTable, clustersim::ReadPai2020,
                                 /*generic=*/false, clustersim::TraceClock::kWallClock,
                                 /*rejects_duplicate_ids=*/true);
