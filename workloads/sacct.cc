// sacct: Slurm's accounting records as `sacct -P` prints them
// (https://slurm.schedmd.com/sacct.html): a header line naming the fields, then one record per
// line, fields separated by '|' (-p's trailing '|' is accepted too). Detected by a first line
// naming JobID and Submit with '|'. Columns are found by name, in any order; JobID and Submit are
// required, Start, End, Partition, AllocTRES, ReqTRES, State, Timelimit, User, Account and QOS used
// when present, others ignored. The usual command: sacct -a -P -X -S 2024-01-01 -E now
//   -o JobID,Submit,Start,End,Partition,AllocTRES,ReqTRES,State,Timelimit,User,Account,QOS
// Mapping:
//   job_id = JobID as written. Job steps (an id with '.': 1234.batch, 1234.extern, 1234.0) run
//   inside their job's allocation and are not jobs: their lines are checked and skipped (-X
//   leaves them out). Array tasks (1234_7) are jobs of their own; a pending array range
//   (1234_[5-1024], or 1234_[1-3,7%2] with a throttle) is one job per task id, never started.
//   Heterogeneous job components (1234+0) are jobs as written.
//   submit_time = Submit; Start and End are the recorded schedule (`Unknown` or `None`: not
//   known). Times are "YYYY-MM-DDTHH:MM:SS" as sacct prints them, read as UTC (sacct prints the
//   cluster's local time; only differences matter, with no daylight-saving adjustment), and
//   become seconds from the earliest submission; Trace::unix_origin is that submission.
//   duration = End - Start; a job running when the log was taken (Start, no End) runs to the
//   latest time in the file (censored), status suffix ":running-at-end"; a job that never started
//   (no Start) gets 0 GPUs and the suffix ":never-started", and the engine rejects it with that
//   reason; its End (when it was cancelled) is its recorded end.
//   gpus = the gres/gpu counts of AllocTRES (gres/gpu=2, gres/gpu:a100=2: the untyped total,
//   else the sum of the typed entries, gres/gpu:a100=4,gres/gpu:v100=4 being 8; the larger of
//   the two when both are given), else of ReqTRES; cpu_milli =
//   1000 x cpu=, memory_mib = mem= (K, M, G, T suffixes; MiB without); a job without GPUs is a
//   CPU-only job (docs/resources.md#cpu-only-jobs). The gres type is not a catalog GPU type and
//   is not used (a site partition names node types, docs/cluster.md#site-model).
//   walltime = Timelimit ([D-]HH:MM:SS, MM:SS, minutes, D-HH, D-HH:MM); UNLIMITED and
//   Partition_Limit: none.
//   trace_status = State in lower case, its first word ("CANCELLED by 1000" -> "cancelled", a
//   trailing '+' dropped); user = User; vc = Account; partition = Partition (a pending job
//   listing several: "a,b"); priority_class = QOS.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <string>
#include <vector>

#include "sim/util/error.h"
#include "workloads/reader.h"
#include "workloads/trace_csv.h"

namespace clustersim {
namespace {

constexpr const char* kColumns =
    "JobID|Submit (required), Start, End, Partition, AllocTRES, ReqTRES, State, Timelimit, User, "
    "Account, QOS";
enum Column { kJobId, kSubmit, kStart, kEnd, kPartition, kAllocTres, kReqTres, kState,
              kTimelimit, kUser, kAccount, kQos, kColumnCount };

// Splits at '|' (sacct -P never quotes); a -p line's trailing '|' ends the last field.
void SplitBars(std::string_view line, std::vector<CsvField>* fields, bool trailing_bar) {
  fields->clear();
  size_t begin = 0;
  while (true) {
    const size_t bar = line.find('|', begin);
    const size_t end = bar == std::string_view::npos ? line.size() : bar;
    fields->push_back({line.substr(begin, end - begin), static_cast<int>(begin) + 1});
    if (bar == std::string_view::npos) break;
    begin = bar + 1;
    if (trailing_bar && begin == line.size()) break;
  }
}

bool IsSacctFirstLine(const std::string& first) {
  if (first.find('|') == std::string::npos) return false;
  const std::vector<std::string_view> names = SplitPlain(first, '|');
  const bool job = std::find(names.begin(), names.end(), "JobID") != names.end();
  const bool submit = std::find(names.begin(), names.end(), "Submit") != names.end();
  return job && submit;
}

bool IsUnknownTime(std::string_view t) { return t.empty() || t == "Unknown" || t == "None"; }

// A time as sacct prints it, or NaN for Unknown / None / empty.
double Time(const CsvField& f, const CsvFieldParser& parse, const char* name) {
  if (IsUnknownTime(f.text)) return std::numeric_limits<double>::quiet_NaN();
  return parse.WallClock(f, name);
}

// Timelimit in seconds, or -1 for none (UNLIMITED, Partition_Limit, empty).
double Timelimit(const CsvField& f, const CsvFieldParser& parse) {
  std::string_view t = f.text;
  if (t.empty() || t == "UNLIMITED" || t == "Partition_Limit") return -1;
  auto fail = [&]() {
    parse.Fail(f, "Timelimit: expected [D-]HH:MM:SS, MM:SS, minutes, D-HH[:MM], UNLIMITED or "
                  "Partition_Limit, got \"" + std::string(f.text) + "\"");
  };
  int64_t days = 0;
  const size_t dash = t.find('-');
  auto number = [&](std::string_view s) {
    int64_t v = 0;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || ptr != s.data() + s.size() || v < 0 || v > 100'000'000) {
      fail();
    }
    return v;
  };
  std::vector<int64_t> parts;
  if (dash != std::string_view::npos) {
    days = number(t.substr(0, dash));
    t.remove_prefix(dash + 1);
  }
  size_t begin = 0;
  while (true) {
    const size_t colon = t.find(':', begin);
    parts.push_back(number(t.substr(begin, colon == std::string_view::npos ? std::string_view::npos
                                                                             : colon - begin)));
    if (colon == std::string_view::npos) break;
    begin = colon + 1;
  }
  if (parts.size() > 3) fail();
  double seconds = 0;
  if (dash != std::string_view::npos) {
    // D-HH, D-HH:MM, D-HH:MM:SS
    seconds = parts[0] * 3600.0 + (parts.size() > 1 ? parts[1] * 60.0 : 0) +
              (parts.size() > 2 ? parts[2] : 0);
  } else if (parts.size() == 1) {
    seconds = parts[0] * 60.0;  // minutes
  } else if (parts.size() == 2) {
    seconds = parts[0] * 60.0 + parts[1];  // MM:SS
  } else {
    seconds = parts[0] * 3600.0 + parts[1] * 60.0 + parts[2];
  }
  return days * 86400.0 + seconds;
}

struct Tres {
  int64_t gpus = -1;  // -1: no gres/gpu entry
  int64_t typed_gpus = 0;  // the sum of the typed entries (gres/gpu:a100=4,gres/gpu:v100=4)
  int64_t cpus = -1;
  double memory_mib = -1;
};

// "billing=4,cpu=4,gres/gpu=2,mem=16G,node=1"; an empty string has nothing.
Tres ParseTres(const CsvField& f, const CsvFieldParser& parse, const char* name) {
  Tres tres;
  std::string_view t = f.text;
  size_t begin = 0;
  while (begin < t.size()) {
    size_t end = t.find(',', begin);
    if (end == std::string_view::npos) end = t.size();
    const std::string_view item = t.substr(begin, end - begin);
    const size_t eq = item.find('=');
    const CsvField at{item, f.column + static_cast<int>(begin)};
    if (eq == std::string_view::npos || eq == 0) {
      parse.Fail(at, std::string(name) + ": expected type=count items separated by ',', got \"" +
                         std::string(item) + "\"");
    }
    const std::string_view key = item.substr(0, eq);
    std::string_view value = item.substr(eq + 1);
    auto count = [&](std::string_view v) {
      int64_t n = 0;
      auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
      if (v.empty() || ec != std::errc() || ptr != v.data() + v.size() || n < 0 ||
          n > 1'000'000) {
        parse.Fail(at, std::string(name) + ": " + std::string(key) +
                           ": expected a count 0..1000000, got \"" + std::string(v) + "\"");
      }
      return n;
    };
    if (key == "gres/gpu") {
      tres.gpus = std::max(tres.gpus, count(value));
    } else if (key.rfind("gres/gpu:", 0) == 0) {
      // Typed entries add up (GPUs of two types); the untyped total, when present, counts
      // them all already.
      tres.typed_gpus += count(value);
      tres.gpus = std::max(tres.gpus, tres.typed_gpus);
    } else if (key == "cpu") {
      tres.cpus = count(value);
    } else if (key == "mem") {
      double scale = 1;  // MiB
      if (!value.empty() && std::isalpha(static_cast<unsigned char>(value.back()))) {
        switch (std::toupper(static_cast<unsigned char>(value.back()))) {
          case 'K': scale = 1.0 / 1024; break;
          case 'M': scale = 1; break;
          case 'G': scale = 1024; break;
          case 'T': scale = 1024.0 * 1024; break;
          default:
            parse.Fail(at, std::string(name) + ": mem: expected a size with K, M, G or T, got \"" +
                               std::string(value) + "\"");
        }
        value.remove_suffix(1);
      }
      double v = 0;
      auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
      if (value.empty() || ec != std::errc() || ptr != value.data() + value.size() || !(v >= 0) ||
          v * scale > 2'000'000'000) {
        parse.Fail(at, std::string(name) + ": mem: expected a size >= 0 (at most 2000000000 "
                                           "MiB), got \"" + std::string(item.substr(eq + 1)) +
                           "\"");
      }
      tres.memory_mib = v * scale;
    }
    begin = end + 1;
  }
  return tres;
}

// "CANCELLED by 1000" -> "cancelled"; "COMPLETED+" -> "completed".
std::string StateName(const CsvField& f, const CsvFieldParser& parse) {
  std::string_view t = f.text;
  t = t.substr(0, t.find(' '));
  if (!t.empty() && t.back() == '+') t.remove_suffix(1);
  std::string name;
  for (char c : t) {
    if (!(std::isupper(static_cast<unsigned char>(c)) || c == '_')) {
      parse.Fail(f, "State: expected a Slurm job state such as COMPLETED, CANCELLED by UID, "
                    "TIMEOUT, got \"" + std::string(f.text) + "\"");
    }
    name += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return name;
}

// The task ids of a pending array range "1234_[1-3,7,9-11%2]" (the part in brackets), at most
// kMaxTasks of them.
constexpr int64_t kMaxTasks = 1'000'000;
std::vector<int64_t> ArrayTasks(std::string_view range, const CsvField& f,
                                const CsvFieldParser& parse) {
  const size_t percent = range.find('%');
  if (percent != std::string_view::npos) range = range.substr(0, percent);  // a throttle
  std::vector<int64_t> tasks;
  auto fail = [&]() {
    parse.Fail(f, "JobID: expected an array range such as 1234_[1-3,7] (at most 1000000 tasks), "
                  "got \"" + std::string(f.text) + "\"");
  };
  auto number = [&](std::string_view s) {
    int64_t v = 0;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || ptr != s.data() + s.size() || v < 0) fail();
    return v;
  };
  size_t begin = 0;
  while (begin <= range.size()) {
    size_t end = range.find(',', begin);
    if (end == std::string_view::npos) end = range.size();
    const std::string_view item = range.substr(begin, end - begin);
    const size_t dash = item.find('-');
    const int64_t a = number(item.substr(0, dash));
    const int64_t b = dash == std::string_view::npos ? a : number(item.substr(dash + 1));
    if (b < a || b - a >= kMaxTasks || static_cast<int64_t>(tasks.size()) + (b - a) >= kMaxTasks) {
      fail();
    }
    for (int64_t k = a; k <= b; ++k) tasks.push_back(k);
    begin = end + 1;
  }
  return tasks;
}

void ReadSacct(const std::string& path, JobSink* sink) {
  LineReader reader(path);
  std::string_view line;
  if (!reader.Next(&line)) throw InputError(path, 1, 1, "empty file: expected a sacct -P header");
  const bool trailing_bar = !line.empty() && line.back() == '|';
  std::vector<CsvField> header;
  SplitBars(line, &header, trailing_bar);
  const CsvHeader columns(header,
                          {"JobID", "Submit", "Start", "End", "Partition", "AllocTRES", "ReqTRES",
                           "State", "Timelimit", "User", "Account", "QOS"},
                          2, path, reader.line_number(), kColumns);
  std::vector<CsvField> fields;
  std::vector<Job> running;  // ended at the latest time of the file
  double latest = -std::numeric_limits<double>::infinity();
  sink->MarkUnixClock();
  auto field = [&](Column c) -> const CsvField* {
    const int p = columns.position(c);
    return p < 0 ? nullptr : &fields[static_cast<size_t>(p)];
  };
  while (reader.Next(&line)) {
    if (line.empty()) continue;
    const int64_t n = reader.line_number();
    SplitBars(line, &fields, trailing_bar);
    columns.CheckWidth(fields, line, path, n);
    const CsvFieldParser parse(path, n);
    const CsvField& id = *field(kJobId);
    if (id.text.empty()) parse.Fail(id, "JobID: expected a job id, got an empty field");
    const bool step = id.text.find('.') != std::string_view::npos;
    Job job;
    job.line = n;
    job.submit_time = Time(*field(kSubmit), parse, "Submit");
    if (std::isnan(job.submit_time)) {
      parse.Fail(*field(kSubmit), "Submit: expected a time YYYY-MM-DDTHH:MM:SS, got \"" +
                                      std::string(field(kSubmit)->text) + "\"");
    }
    const double start = field(kStart) ? Time(*field(kStart), parse, "Start") : NAN;
    const double end = field(kEnd) ? Time(*field(kEnd), parse, "End") : NAN;
    Tres alloc, req;
    if (field(kAllocTres)) alloc = ParseTres(*field(kAllocTres), parse, "AllocTRES");
    if (field(kReqTres)) req = ParseTres(*field(kReqTres), parse, "ReqTRES");
    if (field(kTimelimit)) job.walltime = Timelimit(*field(kTimelimit), parse);
    std::string state = field(kState) ? StateName(*field(kState), parse) : std::string();
    if (step) continue;  // inside its job's allocation (checked above)
    latest = std::max({latest, job.submit_time, std::isnan(start) ? latest : start,
                       std::isnan(end) ? latest : end});
    const Tres& tres = alloc.gpus >= 0 || alloc.cpus >= 0 ? alloc : req;
    const int64_t gpus = alloc.gpus >= 0 ? alloc.gpus : std::max<int64_t>(req.gpus, 0);
    job.gpus = static_cast<int>(gpus);
    if (tres.cpus > 0) job.cpu_milli = static_cast<int>(std::min<int64_t>(tres.cpus, 2'000'000) * 1000);
    if (tres.memory_mib > 0) job.memory_mib = static_cast<int>(std::ceil(tres.memory_mib));
    if (field(kUser)) job.user = field(kUser)->text;
    if (field(kAccount)) job.vc = field(kAccount)->text;
    if (field(kPartition)) job.partition = field(kPartition)->text;
    if (field(kQos)) job.priority_class = field(kQos)->text;
    if (!std::isnan(start)) {
      job.recorded_start = start;
      if (!std::isnan(end)) {
        if (end < start) {
          parse.Fail(*field(kEnd), "End: before the Start of the same record");
        }
        job.recorded_end = end;
        job.duration = end - start;
      } else {
        state += ":running-at-end";
      }
    } else {
      // Never started: pending when the log was taken, or cancelled first.
      if (!std::isnan(end)) job.recorded_end = end;
      job.gpus = 0;
      job.cpu_milli = 0;
      job.memory_mib = 0;
      state += ":never-started";
    }
    job.trace_status = state;
    // A pending array range: one job per task.
    const size_t bracket = id.text.find("_[");
    if (bracket != std::string_view::npos && id.text.back() == ']') {
      const std::string base(id.text.substr(0, bracket));
      for (int64_t task :
           ArrayTasks(id.text.substr(bracket + 2, id.text.size() - bracket - 3), id, parse)) {
        Job one = job;
        one.id = base + "_" + std::to_string(task);
        sink->Add(std::move(one));
      }
      continue;
    }
    job.id = id.text;
    if (job.has_recorded_start() && !job.has_recorded_end()) {
      running.push_back(std::move(job));
      continue;
    }
    sink->Add(std::move(job));
  }
  // Running jobs end at the latest time of the file (censored).
  for (Job& job : running) {
    job.duration = std::max(0.0, latest - job.recorded_start);
    job.recorded_end = latest;
    sink->Add(std::move(job));
  }
}

}  // namespace
}  // namespace clustersim

CLUSTERSIM_REGISTER_TRACE_READER(
    sacct, "sacct", "Slurm accounting records (sacct -P): '|'-separated, a header of field names",
    [](const std::string&, const std::string& first) { return clustersim::IsSacctFirstLine(first); },
    clustersim::ReadSacct, false, clustersim::TraceClock::kWallClock);
