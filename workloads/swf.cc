// swf: the Standard Workload Format of the Parallel Workloads Archive (Feitelson et al.), e.g.
// lublin_256.swf, NASA-iPSC-1993-3.1-cln.swf (gzip is read as it is). Lines starting with ';'
// are header comments (MaxNodes, MaxProcs, UnixStartTime, ...); every other non-empty line has 18
// whitespace-separated numbers, -1 = unknown, in any field. Detected by a first line that is a
// ';' comment or 18 numbers. Mapping (field numbers as in the SWF definition):
//   job_id = 1 (job number, as written); submit_time = 2 (seconds from the log's start, kept);
//   duration = 4 (run time); an unknown run time (-1) becomes 0, a job that takes no time;
//   gpus = 5 (allocated processors), or 8 (requested processors) when 5 is unknown; one processor
//   is one GPU (readers take no options; scale a cluster accordingly, or let a site partition
//   count several processors per GPU, docs/cluster.md#site-model). A job whose processors are
//   unknown or 0 gets 0 GPUs and is rejected by the engine with a reason;
//   walltime = 9 (requested time) when > 0, else not given;
//   trace_status = 11: 1 "completed", 0 "failed", 5 "cancelled", 2 "partial", 3 "partial-last",
//   4 "partial-failed", -1 empty (unknown); another code is an error;
//   user = 12, vc = 13 (group), when not -1; memory_mib = 10 (requested memory, KB per
//   processor) x processors / 1024, rounded up, when > 0 (docs/resources.md);
//   priority_class = 15 (queue) when not -1: the queue's name from the header comment
//   "; Queue: N NAME" when the log declares one (NASA iPSC: 0 interactive, 1 batch), else its
//   number; its level comes from --priority-map (a queue's meaning is the log's own, so no
//   built-in level applies unless its name is one: low, medium, high, urgent);
//   partition = 16 when not -1: its name from "; Partition: N NAME", else its number;
//   recorded schedule: recorded_start = 2 + 3 (submit + wait) when the wait is known (>= 0), and
//   then recorded_end = recorded_start + 4 when the run time is known; the simulator still queues
//   the job itself. A job cancelled before it started (status 5 with a run time of 0 or -1: the
//   wait is then the time to the cancellation) has no recorded start: recorded_end = 2 + 3 (when
//   it was withdrawn), and it gets 0 GPUs and status "cancelled:never-started", so the engine
//   rejects it with that reason (it held nothing in the record).
//   Unknown submit time (-1): the record cannot be replayed in time. It keeps its place in the
//   file (the previous record's submit time, 0 for the first), gets 0 GPUs and the status suffix
//   ":no-submit-time", and the engine rejects it with that reason; the rest of the log replays.
//   Trace::unix_origin = the header's UnixStartTime when given. Not used: 6, 7 (CPU time and
//   used memory), 14, 17, 18 (executable, preceding job and think time). The partitions are
//   also counted (Trace::partitions) so that `validate` can say when a log spans several. Every
//   field must be a number; a submit time >= 0 or -1; the wait and run times >= 0 or -1.
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <string>

#include "sim/util/error.h"
#include "workloads/reader.h"
#include "workloads/trace_csv.h"

namespace clustersim {
namespace {

constexpr int kSwfFields = 18;
constexpr const char* kFieldNames[kSwfFields] = {"job number",
                                                 "submit time",
                                                 "wait time",
                                                 "run time",
                                                 "allocated processors",
                                                 "average CPU time",
                                                 "used memory",
                                                 "requested processors",
                                                 "requested time",
                                                 "requested memory",
                                                 "status",
                                                 "user id",
                                                 "group id",
                                                 "executable",
                                                 "queue",
                                                 "partition",
                                                 "preceding job",
                                                 "think time"};

// Splits at blanks; returns the fields with their columns.
void SplitBlanks(std::string_view line, std::vector<CsvField>* fields) {
  fields->clear();
  size_t i = 0;
  while (true) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    if (i >= line.size()) return;
    const size_t begin = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    fields->push_back({line.substr(begin, i - begin), static_cast<int>(begin) + 1});
  }
}

bool IsNumber(std::string_view t) {
  if (!t.empty() && t.front() == '+') t.remove_prefix(1);
  double v = 0;
  auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  return !t.empty() && ec == std::errc() && ptr == t.data() + t.size() && std::isfinite(v);
}

bool IsSwfFirstLine(const std::string& first) {
  const size_t start = first.find_first_not_of(" \t");
  if (start != std::string::npos && first[start] == ';') return true;
  std::vector<CsvField> fields;
  SplitBlanks(first, &fields);
  if (fields.size() != kSwfFields) return false;
  for (const CsvField& f : fields) {
    if (!IsNumber(f.text)) return false;
  }
  return true;
}

std::string StatusName(int64_t code) {
  switch (code) {
    case 0:
      return "failed";
    case 1:
      return "completed";
    case 2:
      return "partial";
    case 3:
      return "partial-last";
    case 4:
      return "partial-failed";
    case 5:
      return "cancelled";
    default:
      return "";
  }
}

// Returns the field as an integer id text ("-1" -> empty).
std::string_view IdOrEmpty(const CsvField& f, const CsvFieldParser& parse, const char* name) {
  const int64_t v = parse.Integer(f, name, -1, INT64_C(1'000'000'000'000));
  return v == -1 ? std::string_view() : f.text;
}

// What the header comments say that the jobs need.
struct SwfHeader {
  std::map<std::string, std::string> queue_names;      // "; Queue: N NAME"
  std::map<std::string, std::string> partition_names;  // "; Partition: N NAME"
  double unix_start = std::numeric_limits<double>::quiet_NaN();  // "; UnixStartTime: N"
};

// Reads one header comment (the text after ';').
void ReadHeaderComment(std::string_view comment, SwfHeader* header) {
  std::vector<CsvField> words;
  SplitBlanks(comment, &words);
  if (words.size() >= 3 && IsNumber(words[1].text)) {
    if (words[0].text == "Queue:") {
      header->queue_names.emplace(std::string(words[1].text), std::string(words[2].text));
    } else if (words[0].text == "Partition:") {
      header->partition_names.emplace(std::string(words[1].text), std::string(words[2].text));
    }
  }
  if (words.size() >= 2 && words[0].text == "UnixStartTime:" && IsNumber(words[1].text)) {
    double v = 0;
    std::from_chars(words[1].text.data(), words[1].text.data() + words[1].text.size(), v);
    header->unix_start = v;
  }
}

// The name a header comment gives the id `value`, else the id itself.
std::string NameOf(std::string_view value, const std::map<std::string, std::string>& names) {
  auto name = names.find(std::string(value));
  return name == names.end() ? std::string(value) : name->second;
}

void ReadSwf(const std::string& path, JobSink* sink) {
  LineReader reader(path);
  std::string_view line;
  std::vector<CsvField> fields;
  SwfHeader header;
  bool origin_told = false;
  double previous_submit = 0;  // where a record without a submit time keeps its place
  while (reader.Next(&line)) {
    const size_t start = line.find_first_not_of(" \t");
    if (start == std::string_view::npos) continue;
    if (line[start] == ';') {
      ReadHeaderComment(line.substr(start + 1), &header);
      continue;
    }
    if (!origin_told) {
      origin_told = true;
      if (!std::isnan(header.unix_start)) sink->SetUnixOrigin(header.unix_start);
    }
    const int64_t n = reader.line_number();
    SplitBlanks(line, &fields);
    if (fields.size() < kSwfFields) {
      throw InputError(path, static_cast<int>(n), static_cast<int>(line.size()) + 1,
                       "missing field(s): expected 18 whitespace-separated fields (field " +
                           std::to_string(fields.size() + 1) + ", " + kFieldNames[fields.size()] +
                           ", is missing), got " + std::to_string(fields.size()));
    }
    if (fields.size() > kSwfFields) {
      throw InputError(path, static_cast<int>(n), fields[kSwfFields].column,
                       "extra field: expected 18 whitespace-separated fields, got " +
                           std::to_string(fields.size()));
    }
    const CsvFieldParser parse(path, n);
    for (int i = 0; i < kSwfFields; ++i) {
      if (!IsNumber(fields[i].text)) {
        parse.Fail(fields[i], "field " + std::to_string(i + 1) + " (" + kFieldNames[i] +
                                  "): expected a number (-1 = unknown), got \"" +
                                  std::string(fields[i].text) + "\"");
      }
    }
    Job job;
    job.line = n;
    job.id = fields[0].text;
    job.submit_time = parse.Number(fields[1], "field 2 (submit time)");
    const bool no_submit = job.submit_time == -1;
    if (job.submit_time < 0 && !no_submit) {
      parse.Fail(fields[1], "field 2 (submit time): expected seconds >= 0 or -1 (unknown), got " +
                                std::string(fields[1].text));
    }
    if (no_submit) job.submit_time = previous_submit;
    previous_submit = job.submit_time;
    const double run = parse.Number(fields[3], "field 4 (run time)");
    if (run < 0 && run != -1) {
      parse.Fail(fields[3], "field 4 (run time): expected seconds >= 0 or -1 (unknown), got " +
                                std::string(fields[3].text));
    }
    job.duration = run < 0 ? 0 : run;
    const double wait = parse.Number(fields[2], "field 3 (wait time)");
    if (wait < 0 && wait != -1) {
      parse.Fail(fields[2], "field 3 (wait time): expected seconds >= 0 or -1 (unknown), got " +
                                std::string(fields[2].text));
    }
    const int64_t status = parse.Integer(fields[10], "field 11 (status)", -1, 1'000'000);
    if (status > 5) {
      parse.Fail(fields[10], "field 11 (status): expected -1, 0, 1, 2, 3, 4 or 5, got " +
                                 std::string(fields[10].text));
    }
    // Cancelled before it started: the wait is the time to the cancellation.
    const bool never_started = status == 5 && run <= 0;
    if (wait >= 0 && !no_submit) {
      if (never_started) {
        job.recorded_end = job.submit_time + wait;
      } else {
        job.recorded_start = job.submit_time + wait;
        if (run >= 0) job.recorded_end = job.recorded_start + run;
      }
    }
    const int64_t allocated =
        parse.Integer(fields[4], "field 5 (allocated processors)", -1, 1'000'000'000);
    const int64_t requested =
        parse.Integer(fields[7], "field 8 (requested processors)", -1, 1'000'000'000);
    job.gpus = static_cast<int>(allocated > 0 ? allocated : requested > 0 ? requested : 0);
    const double requested_kb = parse.Number(fields[9], "field 10 (requested memory)");
    if (requested_kb > 0 && job.gpus > 0) {
      const double mib = std::ceil(requested_kb * job.gpus / 1024);
      if (mib > 2'000'000'000) {
        parse.Fail(fields[9], "field 10 (requested memory): " + std::string(fields[9].text) +
                                  " KB per processor x " + std::to_string(job.gpus) +
                                  " processors: expected at most 2000000000 MiB in all");
      }
      job.memory_mib = static_cast<int>(mib);
    }
    const double requested_time = parse.Number(fields[8], "field 9 (requested time)");
    if (requested_time > 0) job.walltime = requested_time;
    if (no_submit || never_started) {
      // Kept (never silently dropped) but with nothing to hold: the engine rejects it, its
      // status saying why.
      job.gpus = 0;
      job.memory_mib = 0;
      job.trace_status =
          no_submit ? StatusName(status) + ":no-submit-time" : std::string("cancelled:never-started");
    } else {
      job.trace_status = StatusName(status);
    }
    job.user = IdOrEmpty(fields[11], parse, "field 12 (user id)");
    job.vc = IdOrEmpty(fields[12], parse, "field 13 (group id)");
    if (const std::string_view queue = IdOrEmpty(fields[14], parse, "field 15 (queue)");
        !queue.empty()) {
      job.priority_class = NameOf(queue, header.queue_names);
    }
    if (const std::string_view partition = IdOrEmpty(fields[15], parse, "field 16 (partition)");
        !partition.empty()) {
      job.partition = NameOf(partition, header.partition_names);
      sink->CountPartition(partition);
    }
    sink->Add(std::move(job));
  }
}

}  // namespace
}  // namespace clustersim

CLUSTERSIM_REGISTER_TRACE_READER(
    swf, "swf",
    "Standard Workload Format (Parallel Workloads Archive): ';' "
    "header comments, 18 fields per job; 1 processor = 1 GPU",
    [](const std::string&, const std::string& first) { return clustersim::IsSwfFirstLine(first); },
    clustersim::ReadSwf);
