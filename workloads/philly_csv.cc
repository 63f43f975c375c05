// philly-csv: the derived Philly CSV that GPU-scheduling simulators ship (pollux_philly.csv),
// header `timestamp,duration,num_gpus,gpu_time,cluster` (columns in any order; gpu_time is not
// used; other extra columns are ignored). Detected by a header naming timestamp, duration and
// num_gpus. Mapping:
//   job_id      = "philly-<line number of the row>" (the header is line 1), as
//                 scripts/make_default_trace.py names the jobs of traces/philly_default.csv;
//   submit_time = timestamp (YYYY-MM-DD HH:MM:SS, read as UTC without daylight saving) minus the
//                 earliest timestamp in the file. Rows are not sorted: the reader stores absolute
//                 seconds in one pass and shifts them when the file is read (no second pass);
//   gpus = num_gpus (integer >= 0; 0 is kept and rejected by the engine with a reason);
//   duration = duration (seconds >= 0); vc = cluster. No user, status, GPU type or wall time.
#include "sim/util/error.h"
#include "workloads/reader.h"
#include "workloads/trace_csv.h"

namespace clustersim {
namespace {

enum Column { kTimestamp, kDuration, kNumGpus, kCluster };
const char* const kColumns = "timestamp,duration,num_gpus,gpu_time,cluster";

void ReadPhillyCsv(const std::string& path, JobSink* sink) {
  LineReader reader(path);
  CsvSplitter splitter;
  std::string_view line;
  while (reader.Next(&line) && line.find_first_not_of(" \t") == std::string_view::npos) {
  }
  const CsvHeader header(splitter.Split(line, path, reader.line_number()),
                         {"timestamp", "duration", "num_gpus", "cluster"}, 4, path,
                         reader.line_number(), kColumns);
  while (reader.Next(&line)) {
    if (line.empty()) continue;
    const int64_t n = reader.line_number();
    const std::vector<CsvField>& row = splitter.Split(line, path, n);
    header.CheckWidth(row, line, path, n);
    const CsvFieldParser parse(path, n);
    Job job;
    job.line = n;
    job.id = "philly-" + std::to_string(n);
    job.submit_time = parse.WallClock(row[header.position(kTimestamp)], "timestamp");
    job.duration = parse.NonNegative(row[header.position(kDuration)], "duration");
    job.gpus =
        static_cast<int>(parse.Integer(row[header.position(kNumGpus)], "num_gpus", 0, 1'000'000));
    job.vc = row[header.position(kCluster)].text;
    job.partition = job.vc;  // a virtual cluster is a partition of a site model
    sink->Add(std::move(job));
  }
}

}  // namespace
}  // namespace clustersim

CLUSTERSIM_REGISTER_TRACE_READER(
    philly_csv, "philly-csv", "Philly derived CSV: timestamp,duration,num_gpus,gpu_time,cluster",
    [](const std::string&, const std::string& first) {
      return clustersim::HeaderHasColumns(first, {"timestamp", "duration", "num_gpus"});
    },
    clustersim::ReadPhillyCsv, /*generic=*/false, clustersim::TraceClock::kWallClock);
