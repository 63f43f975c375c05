// The native trace format (DESIGN.md §9), CSV and JSON.
// CSV: a header naming the columns in any order; required job_id, submit_time, gpus, duration;
// optional walltime, gpu_type, user, vc, priority, model, batch_size, status. Times in seconds.
// Fields may be double-quoted ("" escapes a quote). Empty optional fields mean "not given".
// JSON: an array of objects with the same keys, or {"jobs": [...]}.
// Rules: submit_time, duration and walltime are finite numbers >= 0; gpus an integer >= 0 (a job
// of 0 GPUs is kept and rejected by the engine with a reason); priority an integer; batch_size
// an integer >= 0; job_id non-empty and unique. Anything else is an error naming the file, line,
// column (1-based character position of the field) and what was expected.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <unordered_map>

#include "sim/error.h"
#include "sim/json_file.h"
#include "workloads/reader.h"
#include "workloads/trace_csv.h"

namespace clustersim {
namespace {

enum Column {
  kJobId, kSubmit, kGpus, kDuration, kWalltime, kGpuType, kUser, kVc, kPriority, kModel,
  kBatchSize, kStatus, kColumnCount
};
constexpr const char* kColumnNames[kColumnCount] = {
    "job_id", "submit_time", "gpus",  "duration", "walltime",   "gpu_type",
    "user",   "vc",          "priority", "model", "batch_size", "status"};
constexpr int kRequiredColumns = 4;

std::string ColumnList() {
  std::string out;
  for (const char* name : kColumnNames) out += (out.empty() ? "" : ",") + std::string(name);
  return out;
}

struct Field {
  std::string_view text;
  int column;  // 1-based character position
};

// Splits one CSV line into fields. Returns false with *error_column on an unterminated quote.
bool SplitCsv(std::string_view line, std::vector<Field>* fields, std::string* unquoted,
              int* error_column) {
  fields->clear();
  unquoted->clear();
  size_t i = 0;
  // Quoted fields are unescaped into `unquoted`; reserve so views into it stay valid.
  unquoted->reserve(line.size());
  while (true) {
    const int column = static_cast<int>(i) + 1;
    if (i < line.size() && line[i] == '"') {
      const size_t begin = unquoted->size();
      ++i;
      while (true) {
        if (i >= line.size()) {
          *error_column = column;
          return false;
        }
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            unquoted->push_back('"');
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        unquoted->push_back(line[i++]);
      }
      fields->push_back({std::string_view(unquoted->data() + begin, unquoted->size() - begin),
                         column});
      if (i < line.size() && line[i] != ',') {
        *error_column = static_cast<int>(i) + 1;
        return false;
      }
    } else {
      const size_t end = std::min(line.find(',', i), line.size());
      std::string_view text = line.substr(i, end - i);
      while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
      while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
      fields->push_back({text, column});
      i = end;
    }
    if (i >= line.size()) return true;
    ++i;  // the comma
  }
}

class FieldParser {
 public:
  FieldParser(const std::string& path, int64_t line) : path_(path), line_(line) {}

  double NonNegative(const Field& f, const char* name) const {
    double v = 0;
    auto [ptr, ec] = std::from_chars(f.text.data(), f.text.data() + f.text.size(), v);
    if (ec == std::errc::result_out_of_range && ptr == f.text.data() + f.text.size()) {
      Fail(f, std::string(name) + ": number out of range: \"" + std::string(f.text) +
                  "\" (expected a finite number of seconds a double can hold)");
    }
    if (f.text.empty() || ec != std::errc() || ptr != f.text.data() + f.text.size() ||
        !std::isfinite(v)) {
      Fail(f, std::string(name) + ": expected a number of seconds, got \"" +
                  std::string(f.text) + "\"");
    }
    if (v < 0) Fail(f, std::string(name) + ": expected a value >= 0, got " + std::string(f.text));
    return v;
  }

  int64_t Integer(const Field& f, const char* name, int64_t min) const {
    int64_t v = 0;
    std::string_view t = f.text;
    if (!t.empty() && t.front() == '+') t.remove_prefix(1);
    auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (t.empty() || ec != std::errc() || ptr != t.data() + t.size()) {
      // Accept integral values written as decimals, e.g. "4.0".
      double d = 0;
      auto [p2, e2] = std::from_chars(t.data(), t.data() + t.size(), d);
      // A number too large for int64_t or for a double (2^70, 1e400) is still a number: say so.
      const bool huge = (e2 == std::errc::result_out_of_range && p2 == t.data() + t.size()) ||
                        (e2 == std::errc() && p2 == t.data() + t.size() && std::isfinite(d) &&
                         std::abs(d) > 1e15);
      if (huge) {
        v = t.front() == '-' ? std::numeric_limits<int64_t>::min()
                             : std::numeric_limits<int64_t>::max();
      } else if (t.empty() || e2 != std::errc() || p2 != t.data() + t.size() ||
                 d != std::floor(d)) {
        Fail(f, std::string(name) + ": expected an integer, got \"" + std::string(f.text) + "\"");
      } else {
        v = static_cast<int64_t>(d);
      }
    }
    if (v < min) {
      Fail(f, std::string(name) + ": expected an integer >= " + std::to_string(min) + ", got " +
                  std::string(f.text));
    }
    if (v > 1'000'000'000) {
      Fail(f, std::string(name) + ": value too large: expected at most 1000000000, got " +
                  std::string(f.text));
    }
    return v;
  }

  [[noreturn]] void Fail(const Field& f, const std::string& what) const {
    throw InputError(path_, static_cast<int>(line_), f.column, what);
  }

 private:
  const std::string& path_;
  int64_t line_;
};

// Returns the number of '\n' in the file (a cheap first pass, so the job list is allocated once).
int64_t CountLines(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return 0;
  std::vector<char> buffer(kTraceReadBufferBytes);
  int64_t lines = 0;
  size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), f)) > 0) {
    for (const char* p = buffer.data(); (p = static_cast<const char*>(
                                             std::memchr(p, '\n', buffer.data() + n - p))) != nullptr;
         ++p) {
      ++lines;
    }
  }
  std::fclose(f);
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
  std::ifstream in(path, std::ios::binary);
  std::string line;
  std::vector<Field> fields;
  std::string unquoted;
  int error_column = 0;
  int64_t number = 0;
  size_t next = 0;
  while (next < lines.size() && std::getline(in, line)) {
    if (++number != lines[next]) continue;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    CHECK(SplitCsv(line, &fields, &unquoted, &error_column) && fields.size() > id_field,
          "a row read before no longer splits");
    ids.emplace(number, std::string(fields[id_field].text));
    ++next;
  }
  return ids;
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

void ReadNativeCsv(const std::string& path, JobSink* sink) {
  const size_t rows = static_cast<size_t>(CountLines(path));
  sink->ReserveHint(rows);
  std::vector<IdKey> id_keys;
  id_keys.reserve(rows);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, 0, 0, "cannot open trace file");
  std::vector<char> buffer(kTraceReadBufferBytes);
  in.rdbuf()->pubsetbuf(buffer.data(), static_cast<std::streamsize>(buffer.size()));
  std::string line;
  std::vector<Field> fields;
  std::string unquoted;
  int error_column = 0;
  int64_t line_number = 0;
  std::vector<int> column_of_field;  // field index -> Column

  // Header.
  bool has_header = false;
  while (!has_header && std::getline(in, line)) {
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line_number == 1 && line.rfind(kUtf8ByteOrderMark, 0) == 0) {
      line.erase(0, kUtf8ByteOrderMark.size());
    }
    has_header = line.find_first_not_of(" \t") != std::string::npos;
  }
  if (!has_header) {
    throw InputError(path, 1, 1, "empty trace file: expected a header line naming the columns");
  }
  if (!SplitCsv(line, &fields, &unquoted, &error_column)) {
    throw InputError(path, static_cast<int>(line_number), error_column, "malformed header");
  }
  int position[kColumnCount];
  std::fill(std::begin(position), std::end(position), -1);
  for (size_t i = 0; i < fields.size(); ++i) {
    int c = 0;
    while (c < kColumnCount && fields[i].text != kColumnNames[c]) ++c;
    if (c == kColumnCount) {
      throw InputError(path, static_cast<int>(line_number), fields[i].column,
                       "unknown column \"" + std::string(fields[i].text) + "\"; expected: " +
                           ColumnList());
    }
    if (position[c] >= 0) {
      throw InputError(path, static_cast<int>(line_number), fields[i].column,
                       "duplicate column \"" + std::string(fields[i].text) + "\"");
    }
    position[c] = static_cast<int>(i);
    column_of_field.push_back(c);
  }
  for (int c = 0; c < kRequiredColumns; ++c) {
    if (position[c] < 0) {
      throw InputError(path, static_cast<int>(line_number), 1,
                       std::string("header lacks the required column \"") + kColumnNames[c] +
                           "\"; required: job_id,submit_time,gpus,duration");
    }
  }
  const size_t width = fields.size();

  while (std::getline(in, line)) {
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    if (!SplitCsv(line, &fields, &unquoted, &error_column)) {
      throw InputError(path, static_cast<int>(line_number), error_column,
                       "unterminated or malformed quoted field: expected a closing '\"' followed "
                       "by ',' or the end of the line");
    }
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
    const FieldParser parse(path, line_number);
    Job job;
    job.line = line_number;
    const Field& id = fields[position[kJobId]];
    if (id.text.empty()) parse.Fail(id, "job_id: expected a non-empty id");
    job.id = std::string(id.text);
    job.submit_time = parse.NonNegative(fields[position[kSubmit]], "submit_time");
    job.gpus = static_cast<int>(parse.Integer(fields[position[kGpus]], "gpus", 0));
    job.duration = parse.NonNegative(fields[position[kDuration]], "duration");
    auto optional = [&](Column c) -> const Field* {
      return position[c] >= 0 && !fields[position[c]].text.empty() ? &fields[position[c]]
                                                                   : nullptr;
    };
    if (auto* f = optional(kWalltime)) job.walltime = parse.NonNegative(*f, "walltime");
    if (auto* f = optional(kGpuType)) {
      job.gpu_type = f->text;
      job.gpu_type_column = f->column;
    }
    if (auto* f = optional(kUser)) job.user = f->text;
    if (auto* f = optional(kVc)) job.vc = f->text;
    if (auto* f = optional(kPriority)) {
      job.priority = static_cast<int>(parse.Integer(*f, "priority", -1'000'000'000));
    }
    if (auto* f = optional(kModel)) job.model = f->text;
    if (auto* f = optional(kBatchSize)) {
      job.batch_size = static_cast<int>(parse.Integer(*f, "batch_size", 0));
    }
    if (auto* f = optional(kStatus)) job.trace_status = f->text;
    id_keys.push_back({std::hash<std::string_view>()(id.text), line_number, id.column});
    sink->Add(std::move(job));
  }
  CheckUniqueIds(path, std::move(id_keys), static_cast<size_t>(position[kJobId]));
}

void ReadNativeJson(const std::string& path, JobSink* sink) {
  const nlohmann::json doc = ParseJsonFile(path);
  const nlohmann::json* list = &doc;
  if (doc.is_object()) list = &RequireMember(doc, "jobs", path, "trace");
  if (!list->is_array()) throw InputError(path, 0, 0, "expected an array of jobs or {\"jobs\": [...]}");
  std::unordered_map<std::string, size_t> seen_ids;
  for (size_t i = 0; i < list->size(); ++i) {
    const auto& o = (*list)[i];
    const std::string where = "jobs[" + std::to_string(i) + "]";
    if (!o.is_object()) throw InputError(path, 0, 0, where + ": expected an object");
    for (const auto& [key, value] : o.items()) {
      int c = 0;
      while (c < kColumnCount && key != kColumnNames[c]) ++c;
      if (c == kColumnCount) {
        throw InputError(path, 0, 0, where + ": unknown key \"" + key + "\"; expected: " +
                                         ColumnList());
      }
    }
    auto number = [&](const char* key, bool integer) {
      const double v = RequireNumber(RequireMember(o, key, path, where), path, where + "." + key);
      if (v < 0) throw InputError(path, 0, 0, where + "." + key + ": expected a value >= 0");
      if (integer && v != std::floor(v)) {
        throw InputError(path, 0, 0, where + "." + key + ": expected an integer");
      }
      // The same bound as the CSV form's: larger counts would not fit the job's int fields.
      if (integer && v > 1'000'000'000) {
        throw InputError(path, 0, 0,
                         where + "." + key + ": value too large: expected at most 1000000000");
      }
      return v;
    };
    Job job;
    job.line = static_cast<int64_t>(i) + 1;
    const auto& id = RequireMember(o, "job_id", path, where);
    job.id = id.is_string() ? id.get<std::string>() : id.dump();
    if (job.id.empty()) throw InputError(path, 0, 0, where + ".job_id: expected a non-empty id");
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
        throw InputError(path, 0, 0,
                         where + ".priority: expected an integer in [-1000000000, 1000000000]");
      }
      job.priority = static_cast<int>(p);
    }
    auto text = [&](const char* key, Symbol* out) {
      if (o.contains(key) && !o[key].is_null()) *out = RequireString(o[key], path, where + "." + key);
    };
    text("gpu_type", &job.gpu_type);
    text("user", &job.user);
    text("vc", &job.vc);
    text("model", &job.model);
    text("status", &job.trace_status);
    if (!seen_ids.emplace(job.id, i).second) {
      throw InputError(path, 0, 0, where + ".job_id: duplicate id \"" + job.id + "\"");
    }
    sink->Add(std::move(job));
  }
}

bool IsNativeHeader(const std::string& first) {
  std::vector<Field> fields;
  std::string unquoted;
  int error_column = 0;
  if (!SplitCsv(first, &fields, &unquoted, &error_column)) return false;
  // Native if the header has all four required columns (an unknown extra column is then
  // reported by the reader), or if every column is a native name and job_id is among them (a
  // missing required column is then reported, named).
  bool has_id = false;
  bool all_known = true;
  int required = 0;
  for (const auto& f : fields) {
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

CLUSTERSIM_REGISTER_TRACE_READER(native, "native",
                                 "clustersim CSV: job_id,submit_time,gpus,duration[,walltime,"
                                 "gpu_type,user,vc,priority,model,batch_size,status]",
                                 [](const std::string&, const std::string& first) {
                                   return clustersim::IsNativeHeader(first);
                                 },
                                 clustersim::ReadNativeCsv);
CLUSTERSIM_REGISTER_TRACE_READER(native_json, "native-json",
                                 "clustersim JSON: an array of jobs with the native CSV's keys",
                                 [](const std::string& path, const std::string& first) {
                                   return clustersim::EndsWith(path, ".json") ||
                                          first.find_first_of("[{") == first.find_first_not_of(" \t");
                                 },
                                 clustersim::ReadNativeJson, /*generic=*/true);
