// acme: Shanghai AI Lab Acme job traces (`trace_seren.csv`, `trace_kalos.csv`), header
// `job_id,user,node_num,gpu_num,cpu_num,type,state,submit_time,start_time,end_time,duration,queue,
// gpu_time` (columns in any order; Kalos' extra columns mem_per_pod_GB, shared_mem_per_pod,
// fail_time and stop_time are ignored). Detected by a header naming job_id, gpu_num, cpu_num,
// type, state, submit_time and gpu_time. Mapping:
//   job_id, user as given; trace_status = state (COMPLETED, CANCELLED, FAILED, TIMEOUT,
//   NODE_FAIL; any text is kept);
//   submit_time = submit_time minus the earliest submit_time in the file. Times carry a zone
//   offset ("2023-03-01 00:18:22+08:00"): each is converted to UTC seconds first, so rows with
//   different offsets compare correctly (absolute seconds stored in one pass, shifted at the end);
//   gpus = gpu_num (a CPU-only job has 0 and is rejected by the engine with a reason);
//   cpu_milli = 1000 x cpu_num;
//   duration = duration (seconds, = end_time - start_time); when it is empty: end_time -
//   start_time if both are given, else 0 (a job that never started);
//   start_time and end_time, when given, are the recorded schedule (recorded_start,
//   recorded_end; shifted like submit_time);
//   not used: node_num, type (the workload class: Pretrain, SFT, Evaluation, ...; it is not a
//   model name), queue and gpu_time. No vc (Acme has none), wall time or GPU type (both clusters
//   are A100 clusters: a cluster spec, not the trace, says so).
#include "sim/util/error.h"
#include "workloads/reader.h"
#include "workloads/trace_csv.h"

namespace clustersim {
namespace {

const char* const kColumns =
    "job_id,user,node_num,gpu_num,cpu_num,type,state,submit_time,start_time,end_time,duration,"
    "queue,gpu_time";

void ReadAcme(const std::string& path, JobSink* sink) {
  ReadSlurmStyleJobLog(path, sink, /*has_vc=*/false, kColumns);
}

}  // namespace
}  // namespace clustersim

CLUSTERSIM_REGISTER_TRACE_READER(
    acme, "acme",
    "Acme trace_seren.csv / trace_kalos.csv: job_id,user,node_num,"
    "gpu_num,cpu_num,type,state,submit_time,start_time,end_time,"
    "duration,queue,gpu_time",
    [](const std::string&, const std::string& first) {
      return clustersim::HeaderHasColumns(
          first, {"job_id", "gpu_num", "cpu_num", "type", "state", "submit_time", "gpu_time"});
    },
    clustersim::ReadAcme, /*generic=*/false,
    clustersim::TraceClock::kWallClock);
