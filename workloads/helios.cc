// helios: SenseTime Helios `cluster_log.csv` (Venus, Earth, Saturn, Uranus), header
// `job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue`
// (columns in any order; extra columns such as a job name are ignored). Detected by a header
// naming job_id, vc, gpu_num, cpu_num, node_num, state and submit_time. Mapping:
//   job_id, user, vc as given; trace_status = state (COMPLETED, CANCELLED, FAILED, TIMEOUT,
//   NODE_FAIL; any text is kept, so `--filter` can select on it);
//   submit_time = submit_time (YYYY-MM-DD HH:MM:SS, read as UTC) minus the earliest submit_time in
//   the file (absolute seconds stored in one pass, shifted at the end);
//   gpus = gpu_num (a CPU-only job has 0 and is rejected by the engine with a reason);
//   cpu_milli = 1000 x cpu_num;
//   duration = duration (seconds, = end_time - start_time); when it is empty: end_time -
//   start_time if both are given, else 0 (a job that never started);
//   start_time and end_time are checked when given; node_num and queue (the queueing delay) are
//   not used: the simulator places and queues the job itself. No wall time or GPU type.
#include "sim/error.h"
#include "workloads/reader.h"
#include "workloads/trace_csv.h"

namespace clustersim {
namespace {

enum Column { kJobId, kUser, kVc, kGpuNum, kCpuNum, kState, kSubmit, kStart, kEnd, kDuration };
const char* const kColumns =
    "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue";

void ReadHelios(const std::string& path, std::vector<Job>* jobs) {
  const size_t first = jobs->size();
  LineReader reader(path);
  CsvSplitter splitter;
  std::string_view line;
  while (reader.Next(&line) && line.find_first_not_of(" \t") == std::string_view::npos) {
  }
  const CsvHeader header(splitter.Split(line, path, reader.line_number()),
                         {"job_id", "user", "vc", "gpu_num", "cpu_num", "state", "submit_time",
                          "start_time", "end_time", "duration"},
                         10, path, reader.line_number(), kColumns);
  while (reader.Next(&line)) {
    if (line.empty()) continue;
    const int64_t n = reader.line_number();
    const std::vector<CsvField>& row = splitter.Split(line, path, n);
    header.CheckWidth(row, line, path, n);
    const CsvFieldParser parse(path, n);
    auto field = [&](Column c) -> const CsvField& { return row[header.position(c)]; };
    Job job;
    job.line = n;
    job.id = parse.Text(field(kJobId), "job_id");
    job.user = field(kUser).text;
    job.vc = field(kVc).text;
    job.gpus = static_cast<int>(parse.Integer(field(kGpuNum), "gpu_num", 0, 1'000'000));
    if (!CsvFieldParser::IsMissing(field(kCpuNum).text)) {
      job.cpu_milli =
          static_cast<int>(1000 * parse.Integer(field(kCpuNum), "cpu_num", 0, 2'000'000));
    }
    job.trace_status = field(kState).text;
    job.submit_time = parse.WallClock(field(kSubmit), "submit_time");
    const bool has_start = !CsvFieldParser::IsMissing(field(kStart).text);
    const bool has_end = !CsvFieldParser::IsMissing(field(kEnd).text);
    const double start = has_start ? parse.WallClock(field(kStart), "start_time") : 0;
    const double end = has_end ? parse.WallClock(field(kEnd), "end_time") : 0;
    if (!CsvFieldParser::IsMissing(field(kDuration).text)) {
      job.duration = parse.NonNegative(field(kDuration), "duration");
    } else if (has_start && has_end) {
      if (end < start) parse.Fail(field(kEnd), "end_time: expected a time >= start_time");
      job.duration = end - start;
    }
    jobs->push_back(std::move(job));
  }
  ShiftToEarliestSubmit(jobs, first);
}

}  // namespace
}  // namespace clustersim

CLUSTERSIM_REGISTER_TRACE_READER(
    helios, "helios",
    "SenseTime Helios cluster_log.csv: job_id,user,vc,gpu_num,cpu_num,"
    "node_num,state,submit_time,start_time,end_time,duration,queue",
    [](const std::string&, const std::string& first) {
      return clustersim::HeaderHasColumns(
          first, {"job_id", "vc", "gpu_num", "cpu_num", "node_num", "state", "submit_time"});
    },
    clustersim::ReadHelios);
