// The native trace format (traces/README.md#the-native-format), CSV and JSON.
// CSV: a header naming the columns in any order; required job_id, submit_time, gpus, duration;
// optional walltime, gpu_type, user, vc, priority, model, batch_size, status, precision,
// sequence_length, recorded_start, recorded_end (the schedule a real scheduler gave the job, for
// `clustersim validate`), cpus, host_memory_gib, tp, pp, dp (model parallelism: tp x pp divides
// gpus, and tp x pp x dp = gpus when dp is given), deadline, data_nodes, max_nodes, group,
// spread (anti-affinity, docs/spreading.md: a group name and `node` or `rack`, both or neither;
// every job of a group states the same spread, checked when the run starts). Times in
// seconds; cpus (cores, may be fractional) and host_memory_gib (GiB) are the whole job's host
// demands (docs/resources.md), empty = not stated. deadline, data_nodes and max_nodes are the
// job's constraints (docs/deadlines.md): a deadline is a time in the clock of submit_time, or
// "+SECONDS" after the submission; data_nodes node indices separated by '|'; max_nodes an
// integer >= 1. mig_profile names one MIG instance (docs/mig.md), e.g. 3g.20gb; gpus must then
// be 1.
// Fields may be double-quoted ("" escapes a quote). Empty optional fields mean "not given".
// JSON: an array of objects with the same keys, or {"jobs": [...]}.
// Rules: submit_time, duration and walltime are finite numbers >= 0; gpus an integer >= 0 (a job
// of 0 GPUs is kept and rejected by the engine with a reason); priority an integer; batch_size
// an integer >= 0; precision fp32, tf32, mixed-fp16 or mixed-bf16 (a job's training precision;
// empty = its model's recipe); sequence_length an integer >= 0 (tokens per sample, or image
// pixels per side; 0 = its model's default); recorded_start and recorded_end finite numbers,
// kept as given (a record that starts before its submission or ends before its start is counted
// by the sanity report, as for the public formats); cpus in [0, 2000000] and host_memory_gib in
// [0, 2000000] (0 = not stated); a deadline not before submit_time; job_id non-empty and
// unique. Anything else is an error naming
// the file, line, column (1-based character position of the field) and what was expected.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "sim/engine/mig.h"
#include "sim/models/model_catalog.h"
#include "sim/util/error.h"
#include "sim/util/json_file.h"
#include "workloads/reader.h"
#include "workloads/trace_csv.h"

namespace clustersim {
namespace {

enum Column {
  kJobId,
  kSubmit,
  kGpus,
  kDuration,
  kWalltime,
  kGpuType,
  kUser,
  kVc,
  kPriority,
  kModel,
  kBatchSize,
  kStatus,
  kPrecision,
  kSequenceLength,
  kRecordedStart,
  kRecordedEnd,
  kCpus,
  kHostMemoryGib,
  kTp,
  kPp,
  kDp,
  kDeadline,
  kDataNodes,
  kMaxNodes,
  kGroup,
  kSpread,
  kMigProfile,
  kSpotOk,
  kColumnCount
};
constexpr const char* kColumnNames[kColumnCount] = {
    "job_id",     "submit_time",    "gpus",         "duration",        "walltime",
    "gpu_type",   "user",           "vc",           "priority",        "model",
    "batch_size", "status",         "precision",    "sequence_length", "recorded_start",
    "recorded_end", "cpus",         "host_memory_gib", "tp",            "pp",
    "dp",           "deadline",     "data_nodes",      "max_nodes",     "group",
    "spread",       "mig_profile",  "spot_ok"};

// Anti-affinity (docs/spreading.md): a group name (at most kMaxGroupName characters) and its
// spread domain, `node` or `rack`, both or neither. Fills `constraints` or sets `error` and
// returns the column it is about.
constexpr size_t kMaxGroupName = 256;
Column ReadSpread(std::string_view group, std::string_view spread, JobConstraints* constraints,
                  std::string* error) {
  if (group.empty()) {
    *error = "spread: a spread needs a group (the jobs it keeps apart); got none";
    return kSpread;
  }
  if (group.size() > kMaxGroupName) {
    *error = "group: expected a name of at most 256 characters";
    return kGroup;
  }
  if (spread == "node") {
    constraints->spread = SpreadDomain::kNode;
  } else if (spread == "rack") {
    constraints->spread = SpreadDomain::kRack;
  } else {
    *error = spread.empty() ? "spread: group " + std::string(group) +
                                  " needs a spread domain: expected node or rack"
                            : "spread: expected node or rack, got \"" + std::string(spread) +
                                  "\"";
    return kSpread;
  }
  constraints->group = Symbol(group);
  return kGroup;
}

// Host demands: cores -> milli-cores, GiB -> MiB; the bound keeps them in the Job's int fields.
constexpr double kMaxHostUnits = 2'000'000;
int HostUnits(double value, double per_unit) {
  return static_cast<int>(std::llround(value * per_unit));
}
constexpr int kRequiredColumns = 4;

// Model parallelism (docs/reliability.md#model-parallelism-in-traces): tp and pp (each
// 1..kMaxParallel, 0 or empty = not stated) and dp; tp x pp must divide gpus, and a stated dp must
// make tp x pp x dp = gpus. Returns "" or what is wrong; `which` names the field it is about (kTp,
// kPp or kDp).
constexpr int64_t kMaxParallel = 65535;
std::string CheckParallelism(const Job& job, int64_t dp, Column* which) {
  const int64_t tp = std::max<int64_t>(1, job.tensor_parallel);
  const int64_t pp = std::max<int64_t>(1, job.pipeline_parallel);
  if (dp > 0) {
    *which = kDp;
    if (tp * pp * dp != job.gpus) {
      return "dp: tp x pp x dp = " + std::to_string(tp) + " x " + std::to_string(pp) + " x " +
             std::to_string(dp) + " = " + std::to_string(tp * pp * dp) + ", but gpus is " +
             std::to_string(job.gpus);
    }
    return "";
  }
  *which = job.pipeline_parallel > 0 ? kPp : kTp;
  if (job.gpus % (tp * pp) != 0) {
    return std::string(job.pipeline_parallel > 0 ? "pp" : "tp") + ": tp x pp = " +
           std::to_string(tp * pp) + " does not divide gpus = " + std::to_string(job.gpus);
  }
  return "";
}

// data_nodes: node indices separated by '|', as the canonical text (ascending, distinct), or ""
// with *error set to what is wrong.
std::string CanonicalDataNodes(std::string_view text, std::string* error) {
  std::vector<int64_t> nodes;
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t end = text.find('|', begin);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view item = text.substr(begin, end - begin);
    int64_t node = 0;
    const auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), node);
    if (item.empty() || ec != std::errc() || ptr != item.data() + item.size() || node < 0 ||
        node > 100'000'000) {
      *error = "data_nodes: expected node indices (integers >= 0) separated by '|', got \"" +
               std::string(text) + "\"";
      return "";
    }
    nodes.push_back(node);
    begin = end + 1;
  }
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  std::string out;
  for (int64_t node : nodes) out += (out.empty() ? "" : "|") + std::to_string(node);
  return out;
}

std::string ColumnList() {
  std::string out;
  for (const char* name : kColumnNames) out += (out.empty() ? "" : ",") + std::string(name);
  return out;
}

// Returns the number of '\n' in the file (a cheap first pass, so the job list is allocated once).
int64_t CountLines(const std::string& path) {
  InputFile in(path, "trace file");
  std::vector<char> buffer(kTraceReadBufferBytes);
  int64_t lines = 0;
  size_t n = 0;
  while (true) {
    try {
      n = in.Read(buffer.data(), buffer.size());
    } catch (const InputError& e) {
      throw InputError(path, static_cast<int>(lines + 1), 0, e.what_expected());
    }
    if (n == 0) break;
    for (const char* p = buffer.data(); (p = static_cast<const char*>(
                                             std::memchr(p, '\n', buffer.data() + n - p))) != nullptr;
         ++p) {
      ++lines;
    }
  }
  return lines;
}

// Where each row's job id is: its hash, line and column. Kept for every row, excluded or not, so
// duplicates are found across the whole file at 16 bytes a row rather than a stored job.
struct IdKey {
  uint64_t hash;
  int64_t line;
  int32_t column;
};

// The id field (index `id_field`) of each of `lines` (sorted, distinct), read again from the file.
std::unordered_map<int64_t, std::string> IdsOnLines(const std::string& path,
                                                    const std::vector<int64_t>& lines,
                                                    size_t id_field) {
  std::unordered_map<int64_t, std::string> ids;
  LineReader reader(path);
  CsvSplitter splitter;
  std::string_view line;
  size_t next = 0;
  while (next < lines.size() && reader.Next(&line)) {
    if (reader.line_number() != lines[next]) continue;
    const std::vector<CsvField>& fields = splitter.Split(line, path, reader.line_number());
    CHECK(fields.size() > id_field, "a row read before no longer splits");
    ids.emplace(reader.line_number(), std::string(fields[id_field].text));
    ++next;
  }
  return ids;
}

// The keys of the ids of the data rows (the non-empty lines after the header on line `header`)
// before line `end`, read again from the file: while the ids end in increasing numbers they are
// unique without keys, so the keys are built only once they stop doing so.
std::vector<IdKey> IdKeysBefore(const std::string& path, int64_t header, int64_t end,
                                size_t id_field, size_t capacity) {
  std::vector<IdKey> keys;
  keys.reserve(capacity);
  LineReader reader(path);
  CsvSplitter splitter;
  std::string_view line;
  while (reader.Next(&line) && reader.line_number() < end) {
    if (reader.line_number() <= header || line.empty()) continue;
    const std::vector<CsvField>& fields = splitter.Split(line, path, reader.line_number());
    CHECK(fields.size() > id_field, "a row read before no longer splits");
    const CsvField& id = fields[id_field];
    keys.push_back({std::hash<std::string_view>()(id.text), reader.line_number(), id.column});
  }
  return keys;
}

// Job ids must be unique. Sorting (hash, line) keys is several times faster than a node-based
// hash map on a million ids; equal hashes are confirmed by reading both ids again. Reports the
// duplicate that appears earliest in the file.
void CheckUniqueIds(const std::string& path, std::vector<IdKey> keys, size_t id_field) {
  std::sort(keys.begin(), keys.end(), [](const IdKey& a, const IdKey& b) {
    return a.hash != b.hash ? a.hash < b.hash : a.line < b.line;
  });
  std::vector<std::pair<const IdKey*, const IdKey*>> candidates;  // (earlier, later)
  std::vector<int64_t> lines;
  for (size_t k = 1; k < keys.size(); ++k) {
    for (size_t j = k; j-- > 0 && keys[j].hash == keys[k].hash;) {
      candidates.emplace_back(&keys[j], &keys[k]);
      lines.push_back(keys[j].line);
      lines.push_back(keys[k].line);
    }
  }
  if (candidates.empty()) return;
  std::sort(lines.begin(), lines.end());
  lines.erase(std::unique(lines.begin(), lines.end()), lines.end());
  const auto ids = IdsOnLines(path, lines, id_field);
  const IdKey* duplicate = nullptr;
  const IdKey* original = nullptr;
  for (const auto& [earlier, later] : candidates) {
    if (ids.at(earlier->line) != ids.at(later->line)) continue;
    if (!duplicate || later->line < duplicate->line) {
      duplicate = later;
      original = earlier;
    }
  }
  if (duplicate) {
    throw InputError(path, static_cast<int>(duplicate->line), duplicate->column,
                     "duplicate job_id \"" + ids.at(duplicate->line) + "\" (first on line " +
                         std::to_string(original->line) + ")");
  }
}

// Ids that end in increasing numbers ("j0", "j1", ...: generated traces and many logs; or "1",
// "2", ...) are unique without the sort: equal ids would end in equal digits, so in equal
// numbers. Tracks whether every id so far ends in a number (at most 18 digits) larger than the
// one before.
class IncreasingNumberedIds {
 public:
  void Add(std::string_view id) {
    if (!increasing_) return;
    const size_t start = id.find_last_not_of("0123456789") + 1;  // npos + 1 == 0: all digits
    const size_t digits = id.size() - start;
    const bool numbered = digits > 0 && digits <= 18;
    uint64_t value = 0;
    if (numbered) std::from_chars(id.data() + start, id.data() + id.size(), value);
    increasing_ = numbered && (first_ || value > last_);
    last_ = value;
    first_ = false;
  }
  bool increasing() const { return increasing_; }

 private:
  bool increasing_ = true;
  bool first_ = true;
  uint64_t last_ = 0;
};

void ReadNativeCsv(const std::string& path, JobSink* sink) {
  const size_t rows = static_cast<size_t>(CountLines(path));
  sink->ReserveHint(rows);
  std::vector<IdKey> id_keys;  // from the first id that does not increase (IdKeysBefore)
  IncreasingNumberedIds increasing_ids;
  LineReader reader(path);
  CsvSplitter splitter;
  std::string_view line;
  std::vector<int> column_of_field;  // field index -> Column

  // Header: the first non-blank line. Unlike the public formats, every column must be known.
  bool has_header = false;
  while (!has_header && reader.Next(&line)) {
    has_header = line.find_first_not_of(" \t") != std::string_view::npos;
  }
  if (!has_header) {
    throw InputError(path, 1, 1, "empty trace file: expected a header line naming the columns");
  }
  const int64_t header_line = reader.line_number();
  const std::vector<CsvField>& header = splitter.Split(line, path, header_line);
  int position[kColumnCount];
  std::fill(std::begin(position), std::end(position), -1);
  for (size_t i = 0; i < header.size(); ++i) {
    int c = 0;
    while (c < kColumnCount && header[i].text != kColumnNames[c]) ++c;
    if (c == kColumnCount) {
      throw InputError(
          path, static_cast<int>(header_line), header[i].column,
          "unknown column \"" + std::string(header[i].text) + "\"; expected: " + ColumnList());
    }
    if (position[c] >= 0) {
      throw InputError(path, static_cast<int>(header_line), header[i].column,
                       "duplicate column \"" + std::string(header[i].text) + "\"");
    }
    position[c] = static_cast<int>(i);
    column_of_field.push_back(c);
  }
  for (int c = 0; c < kRequiredColumns; ++c) {
    if (position[c] < 0) {
      throw InputError(path, static_cast<int>(header_line), 1,
                       std::string("header lacks the required column \"") + kColumnNames[c] +
                           "\"; required: job_id,submit_time,gpus,duration");
    }
  }
  const size_t width = header.size();

  while (reader.Next(&line)) {
    if (line.empty()) continue;
    const int64_t line_number = reader.line_number();
    const std::vector<CsvField>& fields = splitter.Split(line, path, line_number);
    if (fields.size() < width) {
      throw InputError(path, static_cast<int>(line_number), static_cast<int>(line.size()) + 1,
                       "missing field(s): expected " + std::to_string(width) + " fields (" +
                           kColumnNames[column_of_field[fields.size()]] + " is missing), got " +
                           std::to_string(fields.size()));
    }
    if (fields.size() > width) {
      throw InputError(path, static_cast<int>(line_number), fields[width].column,
                       "extra field: expected " + std::to_string(width) + " fields, got " +
                           std::to_string(fields.size()));
    }
    const CsvFieldParser parse(path, line_number);
    Job job;
    job.line = line_number;
    const CsvField& id = fields[position[kJobId]];
    if (id.text.empty()) parse.Fail(id, "job_id: expected a non-empty id");
    job.id = std::string(id.text);
    job.submit_time = parse.Seconds(fields[position[kSubmit]], "submit_time");
    job.gpus = static_cast<int>(parse.Count(fields[position[kGpus]], "gpus", 0));
    job.duration = parse.Seconds(fields[position[kDuration]], "duration");
    auto optional = [&](Column c) -> const CsvField* {
      return position[c] >= 0 && !fields[position[c]].text.empty() ? &fields[position[c]]
                                                                   : nullptr;
    };
    if (auto* f = optional(kWalltime)) job.walltime = parse.Seconds(*f, "walltime");
    if (auto* f = optional(kGpuType)) {
      job.gpu_type = f->text;
      job.gpu_type_column = f->column;
    }
    if (auto* f = optional(kUser)) job.user = f->text;
    if (auto* f = optional(kVc)) job.vc = f->text;
    if (auto* f = optional(kPriority)) {
      job.priority = static_cast<int>(parse.Count(*f, "priority", -1'000'000'000));
    }
    if (auto* f = optional(kModel)) job.model = f->text;
    if (auto* f = optional(kBatchSize)) {
      job.batch_size = static_cast<int>(parse.Count(*f, "batch_size", 0));
    }
    if (auto* f = optional(kStatus)) job.trace_status = f->text;
    if (auto* f = optional(kPrecision)) {
      const auto precision = ParsePrecision(std::string(f->text));
      if (!precision) {
        throw InputError(path, line_number, f->column,
                         "precision: expected fp32, tf32, mixed-fp16 or mixed-bf16, got \"" +
                             std::string(f->text) + "\"");
      }
      job.precision = PrecisionName(*precision);
    }
    if (auto* f = optional(kSequenceLength)) {
      job.sequence_length = static_cast<int>(parse.Count(*f, "sequence_length", 0));
    }
    if (auto* f = optional(kRecordedStart)) {
      job.recorded_start = parse.Number(*f, "recorded_start");
    }
    if (auto* f = optional(kRecordedEnd)) job.recorded_end = parse.Number(*f, "recorded_end");
    if (auto* f = optional(kCpus)) {
      const double cpus = parse.NonNegative(*f, "cpus");
      if (cpus > kMaxHostUnits) parse.Fail(*f, "cpus: expected at most 2000000 cores");
      job.cpu_milli = HostUnits(cpus, 1000);
    }
    if (auto* f = optional(kHostMemoryGib)) {
      const double gib = parse.NonNegative(*f, "host_memory_gib");
      if (gib > kMaxHostUnits) parse.Fail(*f, "host_memory_gib: expected at most 2000000 GiB");
      job.memory_mib = HostUnits(gib, 1024);
    }
    int64_t dp = 0;
    for (const Column c : {kTp, kPp, kDp}) {
      const CsvField* f = optional(c);
      if (f == nullptr) continue;
      const int64_t v = parse.Count(*f, kColumnNames[c], 0);
      if (v > kMaxParallel) {
        parse.Fail(*f, std::string(kColumnNames[c]) + ": expected at most 65535");
      }
      if (c == kTp) job.tensor_parallel = static_cast<uint16_t>(v);
      if (c == kPp) job.pipeline_parallel = static_cast<uint16_t>(v);
      if (c == kDp) dp = v;
    }
    if (job.tensor_parallel > 0 || job.pipeline_parallel > 0 || dp > 0) {
      Column which = kTp;
      if (const std::string what = CheckParallelism(job, dp, &which); !what.empty()) {
        parse.Fail(fields[position[which]], what);
      }
    }
    JobConstraints constraints;
    bool constrained = false;
    if (auto* f = optional(kDeadline)) {
      constrained = true;
      if (f->text.front() == '+') {
        CsvField after = *f;
        after.text.remove_prefix(1);
        ++after.column;
        constraints.deadline = parse.Seconds(after, "deadline");
      } else {
        const double at = parse.Seconds(*f, "deadline");
        if (at < job.submit_time) {
          parse.Fail(*f, "deadline: " + std::string(f->text) + " is before submit_time; expected "
                         "a time >= submit_time, or +SECONDS after the submission");
        }
        constraints.deadline = at - job.submit_time;
      }
    }
    if (auto* f = optional(kDataNodes)) {
      constrained = true;
      std::string error;
      constraints.data_nodes = CanonicalDataNodes(f->text, &error);
      constraints.data_nodes_column = f->column;
      if (!error.empty()) parse.Fail(*f, error);
    }
    if (auto* f = optional(kMaxNodes)) {
      constrained = true;
      constraints.max_nodes = static_cast<int32_t>(parse.Count(*f, "max_nodes", 1));
    }
    {
      const CsvField* group = optional(kGroup);
      const CsvField* spread = optional(kSpread);
      std::string error;
      if (group != nullptr || spread != nullptr) {
        const Column bad = ReadSpread(group ? group->text : "", spread ? spread->text : "",
                                      &constraints, &error);
        if (!error.empty()) parse.Fail(position[bad] >= 0 ? fields[position[bad]] : *group, error);
        constraints.group_column = group->column;
        constrained = true;
      }
    }
    if (auto* f = optional(kSpotOk)) {
      // docs/autoscaling.md#spot-placement: 0 = never on spot nodes; 1 (default) = may be.
      if (f->text != "0" && f->text != "1") parse.Fail(*f, "spot_ok: expected 0 or 1");
      if (f->text == "0") {
        constraints.spot_ok = false;
        constrained = true;
      }
    }
    if (auto* f = optional(kMigProfile)) {
      if (job.gpus != 1) {
        parse.Fail(*f, "mig_profile: a MIG instance is one GPU's slice; expected gpus = 1, got " +
                           std::to_string(job.gpus));
      }
      job.mig_profile = MigProfileId(f->text);
      if (job.mig_profile == 0) parse.Fail(*f, "mig_profile: more than 65535 distinct names");
    }
    const bool increasing_before = increasing_ids.increasing();
    increasing_ids.Add(id.text);
    if (!increasing_ids.increasing()) {
      if (increasing_before) {
        id_keys = IdKeysBefore(path, header_line, line_number,
                               static_cast<size_t>(position[kJobId]), rows);
      }
      id_keys.push_back({std::hash<std::string_view>()(id.text), line_number, id.column});
    }
    sink->Add(std::move(job), {}, constrained ? &constraints : nullptr);
  }
  if (!increasing_ids.increasing()) {
    CheckUniqueIds(path, std::move(id_keys), static_cast<size_t>(position[kJobId]));
  }
}

// Errors name jobs "jobs[i]" whether the jobs are the document (an array) or its "jobs" member.
void ReadNativeJson(const std::string& path, JobSink* sink) try {
  const nlohmann::json doc = ParseJsonFile(path);
  const nlohmann::json* list = &doc;
  if (doc.is_object()) list = &RequireMember(doc, "jobs", path, "trace");
  if (!list->is_array()) throw InputError(path, 0, 0, "expected an array of jobs or {\"jobs\": [...]}");
  std::unordered_map<std::string, size_t> seen_ids;
  for (size_t i = 0; i < list->size(); ++i) {
    const auto& o = (*list)[i];
    const std::string where = "jobs[" + std::to_string(i) + "]";
    if (!o.is_object()) throw JsonValueError(path, where, "expected an object");
    for (const auto& [key, value] : o.items()) {
      int c = 0;
      while (c < kColumnCount && key != kColumnNames[c]) ++c;
      if (c == kColumnCount) {
        throw JsonValueError::Verbatim(
            path, where + "." + key,
            where + ": unknown key \"" + key + "\"; expected: " + ColumnList());
      }
    }
    auto number = [&](const char* key, bool integer) {
      const double v = RequireNumber(RequireMember(o, key, path, where), path, where + "." + key);
      if (v < 0) throw JsonValueError(path, where + "." + key, "expected a value >= 0");
      if (integer && v != std::floor(v)) {
        throw JsonValueError(path, where + "." + key, "expected an integer");
      }
      // The same bound as the CSV form's: larger counts would not fit the job's int fields.
      if (integer && v > 1'000'000'000) {
        throw JsonValueError(path, where + "." + key,
                             "value too large: expected at most 1000000000");
      }
      return v;
    };
    Job job;
    job.line = static_cast<int64_t>(i) + 1;
    const auto& id = RequireMember(o, "job_id", path, where);
    job.id = id.is_string() ? id.get<std::string>() : id.dump();
    if (job.id.empty()) throw JsonValueError(path, where + ".job_id", "expected a non-empty id");
    job.submit_time = number("submit_time", false);
    job.gpus = static_cast<int>(number("gpus", true));
    job.duration = number("duration", false);
    if (o.contains("walltime") && !o["walltime"].is_null()) job.walltime = number("walltime", false);
    if (o.contains("batch_size") && !o["batch_size"].is_null()) {
      job.batch_size = static_cast<int>(number("batch_size", true));
    }
    if (o.contains("priority") && !o["priority"].is_null()) {
      const double p = RequireNumber(o["priority"], path, where + ".priority");
      if (p != std::floor(p) || std::abs(p) > 1'000'000'000) {
        throw JsonValueError(path, where + ".priority",
                             "expected an integer in [-1000000000, 1000000000]");
      }
      job.priority = static_cast<int>(p);
    }
    auto text = [&](const char* key, Symbol* out) {
      if (o.contains(key) && !o[key].is_null()) *out = RequireString(o[key], path, where + "." + key);
    };
    for (const auto& [key, units, out] : {std::tuple{"cpus", 1000.0, &job.cpu_milli},
                                          std::tuple{"host_memory_gib", 1024.0, &job.memory_mib}}) {
      if (!o.contains(key) || o[key].is_null()) continue;
      const double v = number(key, false);
      if (v > kMaxHostUnits) {
        throw InputError(path, 0, 0, where + "." + key + ": expected at most 2000000");
      }
      *out = HostUnits(v, units);
    }
    text("gpu_type", &job.gpu_type);
    text("user", &job.user);
    text("vc", &job.vc);
    text("model", &job.model);
    text("status", &job.trace_status);
    if (o.contains("precision") && !o["precision"].is_null()) {
      const std::string p = RequireString(o["precision"], path, where + ".precision");
      const auto precision = ParsePrecision(p);
      if (!precision) {
        throw JsonValueError(path, where + ".precision",
                             "expected fp32, tf32, mixed-fp16 or mixed-bf16, got \"" + p + "\"");
      }
      job.precision = PrecisionName(*precision);
    }
    if (o.contains("sequence_length") && !o["sequence_length"].is_null()) {
      job.sequence_length = static_cast<int>(number("sequence_length", true));
    }
    for (const char* key : {"recorded_start", "recorded_end"}) {
      if (!o.contains(key) || o[key].is_null()) continue;
      const double v = RequireNumber(o[key], path, where + "." + key);
      (std::string(key) == "recorded_start" ? job.recorded_start : job.recorded_end) = v;
    }
    int64_t dp = 0;
    for (const Column c : {kTp, kPp, kDp}) {
      const char* key = kColumnNames[c];
      if (!o.contains(key) || o[key].is_null()) continue;
      const double v = number(key, true);
      if (v > kMaxParallel) {
        throw JsonValueError(path, where + "." + key, "expected at most 65535");
      }
      if (c == kTp) job.tensor_parallel = static_cast<uint16_t>(v);
      if (c == kPp) job.pipeline_parallel = static_cast<uint16_t>(v);
      if (c == kDp) dp = static_cast<int64_t>(v);
    }
    if (job.tensor_parallel > 0 || job.pipeline_parallel > 0 || dp > 0) {
      Column which = kTp;
      if (const std::string what = CheckParallelism(job, dp, &which); !what.empty()) {
        throw JsonValueError::Verbatim(path, where + "." + kColumnNames[which], where + "." + what);
      }
    }
    JobConstraints constraints;
    bool constrained = false;
    if (o.contains("deadline") && !o["deadline"].is_null()) {
      constrained = true;
      const auto& d = o["deadline"];
      const std::string at = where + ".deadline";
      if (d.is_string()) {
        const std::string text = d.get<std::string>();
        char* end = nullptr;
        const double seconds = text.size() > 1 && text[0] == '+'
                                   ? std::strtod(text.c_str() + 1, &end)
                                   : std::nan("");
        if (!(seconds >= 0) || !std::isfinite(seconds) || *end != '\0') {
          throw JsonValueError(path, at, "expected a time >= submit_time or \"+SECONDS\"");
        }
        constraints.deadline = seconds;
      } else {
        const double v = RequireNumber(d, path, at);
        if (!(v >= job.submit_time) || !std::isfinite(v)) {
          throw JsonValueError(path, at, "expected a time >= submit_time or \"+SECONDS\"");
        }
        constraints.deadline = v - job.submit_time;
      }
    }
    if (o.contains("data_nodes") && !o["data_nodes"].is_null()) {
      constrained = true;
      const auto& d = o["data_nodes"];
      std::string text = d.is_number_integer() ? d.dump() : RequireString(d, path, where + ".data_nodes");
      std::string error;
      constraints.data_nodes = CanonicalDataNodes(text, &error);
      if (!error.empty()) throw JsonValueError(path, where + ".data_nodes", error);
    }
    if (o.contains("max_nodes") && !o["max_nodes"].is_null()) {
      constrained = true;
      const double v = number("max_nodes", true);
      if (v < 1) throw JsonValueError(path, where + ".max_nodes", "expected an integer >= 1");
      constraints.max_nodes = static_cast<int32_t>(v);
    }
    if ((o.contains("group") && !o["group"].is_null()) ||
        (o.contains("spread") && !o["spread"].is_null())) {
      const bool has_group = o.contains("group") && !o["group"].is_null();
      const bool has_spread = o.contains("spread") && !o["spread"].is_null();
      const std::string group =
          has_group ? RequireString(o["group"], path, where + ".group") : std::string();
      const std::string spread =
          has_spread ? RequireString(o["spread"], path, where + ".spread") : std::string();
      std::string error;
      const Column bad = ReadSpread(group, spread, &constraints, &error);
      if (!error.empty()) {
        throw JsonValueError(path, where + "." + kColumnNames[bad], error);
      }
      constrained = true;
    }
    if (o.contains("spot_ok") && !o["spot_ok"].is_null()) {
      const double v = number("spot_ok", true);
      if (v != 0 && v != 1) throw JsonValueError(path, where + ".spot_ok", "expected 0 or 1");
      if (v == 0) {
        constraints.spot_ok = false;
        constrained = true;
      }
    }
    if (o.contains("mig_profile") && !o["mig_profile"].is_null()) {
      job.mig_profile = MigProfileId(RequireString(o["mig_profile"], path, where + ".mig_profile"));
      if (job.mig_profile == 0) {
        throw JsonValueError(path, where + ".mig_profile", "more than 65535 distinct names");
      }
      if (job.gpus != 1) {
        throw JsonValueError(path, where + ".mig_profile",
                             "a MIG instance is one GPU's slice; expected gpus = 1, got " +
                                 std::to_string(job.gpus));
      }
    }
    if (!seen_ids.emplace(job.id, i).second) {
      throw JsonValueError(path, where + ".job_id", "duplicate id \"" + job.id + "\"");
    }
    sink->Add(std::move(job), {}, constrained ? &constraints : nullptr);
  }
} catch (const JsonValueError& e) {
  throw AtJsonPosition(e, path, ReadFileText(path), /*root_name=*/"jobs");
}

bool IsNativeHeader(const std::string& first) {
  CsvSplitter splitter;
  std::vector<CsvField> fields;
  try {
    fields = splitter.Split(first, "", 1);
  } catch (const InputError&) {
    return false;  // a malformed quote: not this format
  }
  // Native if the header has all four required columns (an unknown extra column is then
  // reported by the reader), or if every column is a native name and job_id is among them (a
  // missing required column is then reported, named).
  bool has_id = false;
  bool all_known = true;
  int required = 0;
  for (const CsvField& f : fields) {
    int c = 0;
    while (c < kColumnCount && f.text != kColumnNames[c]) ++c;
    all_known = all_known && c < kColumnCount;
    has_id = has_id || c == kJobId;
    required += c < kRequiredColumns;
  }
  return required == kRequiredColumns || (all_known && has_id);
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace
}  // namespace clustersim

CLUSTERSIM_REGISTER_TRACE_READER(
    native, "native",
    "clustersim CSV: job_id,submit_time,gpus,duration[,walltime,"
    "gpu_type,user,vc,priority,model,batch_size,status,precision,sequence_length,recorded_start,"
    "recorded_end,cpus,host_memory_gib,deadline,data_nodes,max_nodes,group,spread,mig_profile,spot_ok]",
    [](const std::string&, const std::string& first) { return clustersim::IsNativeHeader(first); },
    clustersim::ReadNativeCsv, /*generic=*/false, clustersim::TraceClock::kRelative,
    /*rejects_duplicate_ids=*/true);
CLUSTERSIM_REGISTER_TRACE_READER(
    native_json, "native-json", "clustersim JSON: an array of jobs with the native CSV's keys",
    [](const std::string& path, const std::string& first) {
      return clustersim::EndsWith(path, ".json") ||
             first.find_first_of("[{") == first.find_first_not_of(" \t");
    },
    clustersim::ReadNativeJson, /*generic=*/true, clustersim::TraceClock::kRelative,
    /*rejects_duplicate_ids=*/true);
