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
//   start_time and end_time are checked when given and kept as the recorded schedule
//   (recorded_start, recorded_end; shifted like submit_time); node_num and queue (the queueing
//   delay) are not used: the simulator places and queues the job itself. No wall time or GPU
//   type.
#include "sim/util/error.h"
#include "workloads/reader.h"
#include "workloads/trace_csv.h"

namespace clustersim {
namespace {

const char* const kColumns =
    "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue";

void ReadHelios(const std::string& path, JobSink* sink) {
  ReadSlurmStyleJobLog(path, sink, /*has_vc=*/true, kColumns);
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
    clustersim::ReadHelios, /*generic=*/false,
    clustersim::TraceClock::kWallClock);
