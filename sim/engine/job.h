// A job as every trace reader produces it (docs/engine.md#jobs): what was submitted, never what the
// simulator did with it (that is JobRun in sim/engine/engine.h). Times in seconds from the trace's
// origin, GPU counts in whole GPUs.
#ifndef CLUSTERSIM_SIM_ENGINE_JOB_H_
#define CLUSTERSIM_SIM_ENGINE_JOB_H_

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "sim/util/symbol.h"

namespace clustersim {

using JobId = int32_t;  // index of the job in the trace after sorting by submit time
inline constexpr JobId kNoJob = -1;

// A time the trace does not record (Job::recorded_start, recorded_end).
inline constexpr double kNotRecorded = std::numeric_limits<double>::quiet_NaN();

// One running interval of a job as the trace records it (an attempt of a Philly job): seconds in
// the job's clock, and the GPUs it held.
struct RecordedAttempt {
  double start = 0;
  double end = 0;
  int gpus = 0;
};

// The fields are ordered so that none is padded (160 bytes; a million jobs hold 160 MB): the
// 8-byte ones first, the 4-byte ones after (recorded_start starts 8-aligned), the two 2-byte
// parallel degrees last but one, then 4 bytes of tail padding. What few jobs have
// (a deadline, data locality, a node limit) is kept apart, in Trace::constraints.
struct Job {
  std::string id;           // as in the trace
  double submit_time = 0;   // seconds
  double duration = 0;      // run time in the trace, seconds (on the reference GPU type)
  double walltime = -1;     // requested wall time, seconds; < 0 = not given
  int64_t line = 0;         // line of the record in its source file (for messages)
  int gpus = 0;             // GPUs requested
  int gpu_type_column = 0;  // column of the gpu_type field in that line, 0 = unknown
  int priority = 0;         // class level, higher = more urgent (docs/policies.md#priority)
  int batch_size = 0;  // 0 = unknown
  int16_t gpu_milli = 0;  // share of one GPU in thousandths (fractional requests, gpus == 1);
                          // 0 = whole GPUs. Without GPU sharing a fractional job holds a GPU.
  // The MIG profile the job asks for (docs/mig.md), e.g. "3g.20gb": one instance of it on a GPU
  // in MIG mode (gpus == 1). 0 = none; else an id of MigProfileId (its name: MigProfileName).
  // Readers keep any name; the engine rejects, with a reason, a name no MIG GPU type of the
  // cluster offers.
  uint16_t mig_profile = 0;
  int cpu_milli = 0;   // CPU demand of the whole job in thousandths of a core; 0 = not stated
  int memory_mib = 0;  // host-memory demand of the whole job in MiB; 0 = not stated
                       // (both: docs/resources.md)
  Symbol gpu_type;     // allowed GPU types separated by '|'; empty = any
  Symbol user;
  Symbol vc;            // virtual cluster / group
  Symbol model;         // model name, empty = unknown
  Symbol precision;     // fp32, tf32, mixed-fp16 or mixed-bf16; empty = the model's default
  int sequence_length = 0;  // tokens per sample (or image pixels per side); 0 = model default
  Symbol trace_status;  // status recorded in the trace, empty = unknown
  // What the trace says its real scheduler did (traces/README.md, per format), in the clock of
  // submit_time (origin and window as submit_time; the load factor never moves it);
  // kNotRecorded = absent.
  // recorded_start: the first start. recorded_end: when the job left the system: the end of its
  // last running interval, or, for a job that never started, when it was withdrawn.
  double recorded_start = kNotRecorded;
  double recorded_end = kNotRecorded;
  // Its recorded running intervals, for formats with several per job (Philly attempts):
  // Trace::recorded_attempts[recorded_attempt_begin, + recorded_attempt_count); none otherwise
  // (one interval, [recorded_start, recorded_end), when both are recorded).
  uint32_t recorded_attempt_begin = 0;
  uint32_t recorded_attempt_count = 0;

  // True if the job asks for a share of one GPU (gpus == 1, 0 < gpu_milli < 1000).
  bool IsShare() const { return gpus == 1 && gpu_milli > 0 && gpu_milli < 1000; }
  // Its GPU demand in thousandths of a GPU, whether or not the run shares GPUs: the share, else
  // gpus x 1000 (0 for a CPU-only job).
  int64_t DemandMilli() const { return IsShare() ? gpu_milli : int64_t{gpus} * 1000; }

  bool has_recorded_start() const { return !std::isnan(recorded_start); }
  bool has_recorded_end() const { return !std::isnan(recorded_end); }
  // The class as the trace names it (openb qos, an SWF queue), empty = none; `priority` holds
  // its level (sim/engine/priority_class.h), mapped while the trace is read.
  Symbol priority_class;
  // Model parallelism the trace states (docs/reliability.md#model-parallelism-in-traces):
  // tensor-parallel and pipeline-parallel degrees, 0 = not stated; the data-parallel degree is
  // gpus / (tp x pp). A tensor-parallel group stays within one node (an NVLink domain).
  uint16_t tensor_parallel = 0;
  uint16_t pipeline_parallel = 0;
  // 1 + the index of the job's JobConstraints in Trace::constraints; 0 = none. Several jobs may
  // share an entry (copies of one job keep it).
  uint32_t constraints = 0;
  // The partition(s) the trace names (SWF field 16, Slurm's Partition, Philly's virtual
  // cluster), several separated by ','; empty = none. A cluster's site model maps it onto its
  // partitions (docs/cluster.md#site-model).
  Symbol partition;
};

// MIG profile names as jobs hold them (Job::mig_profile; sim/engine/mig.cc): MigProfileId gives
// the id (>= 1) of `name`, the same for the same name in every thread; 0 once 65535 distinct
// names are held (the reader then refuses the field). MigProfileName: the name of an id (empty
// for 0).
uint16_t MigProfileId(std::string_view name);
const std::string& MigProfileName(uint16_t id);

static_assert(sizeof(void*) != 8 || sizeof(Job) <= 160, "Job grew: check its layout (above)");

// Where no two running jobs of one anti-affinity group may be (docs/spreading.md): one per node,
// or one per rack (Node::rack, the cluster spec's racks); kNone = the job has no such rule.
enum class SpreadDomain : uint8_t { kNone, kNode, kRack };
// "node", "rack" ("" for kNone).
inline const char* SpreadDomainName(SpreadDomain domain) {
  return domain == SpreadDomain::kNode ? "node" : domain == SpreadDomain::kRack ? "rack" : "";
}

// What a job asks beyond its request (docs/deadlines.md): a deadline (its SLA), the nodes that
// hold its data (locality), and the most nodes it may span. Few jobs of most traces have any, so
// they are kept apart from Job (Job::constraints indexes Trace::constraints).
struct JobConstraints {
  // Seconds after submit_time by which the job should have ended; < 0 = none (best effort). A
  // reader turns an absolute deadline into this distance, so windows and load factors move the
  // deadline with the submission.
  double deadline = -1;
  // Node indices of the cluster (0-based, as `clustersim cluster show` numbers them) that hold the
  // job's data, separated by '|'; empty = none. The run's --locality-alpha says how many of its
  // GPUs must be there.
  Symbol data_nodes;
  int32_t max_nodes = 0;  // most nodes the job may span (beta); 0 = the run's --max-nodes-per-job
  int32_t data_nodes_column = 0;  // the field's column in its trace line (messages); 0 = unknown
  // Anti-affinity (docs/spreading.md): the job's group (empty = none) and the domain in which no
  // two running jobs of the group may be. Every job of a group states the same domain.
  Symbol group;
  int32_t group_column = 0;  // the group field's column in its trace line (messages); 0 = unknown
  SpreadDomain spread = SpreadDomain::kNone;
  // False: the job never runs on spot nodes (docs/autoscaling.md#spot-placement).
  bool spot_ok = true;
  bool has_deadline() const { return deadline >= 0; }
};

struct Trace {
  std::string path;
  std::string format;
  std::string sha256;
  // Sorted by (submit_time, input order); JobId is the index here.
  std::vector<Job> jobs;
  // True if the reader guaranteed that no two jobs share an id (it rejects duplicates).
  bool ids_unique = false;
  // The recorded attempts of every job that has them (Job::recorded_attempt_begin), in job
  // order.
  std::vector<RecordedAttempt> recorded_attempts;
  // The --priority-map the class names were mapped with (lower-case names -> levels).
  std::map<std::string, int> priority_map;
  // Jobs per partition the log names (SWF field 16), over every record read; empty when the
  // format has no partitions or the log names none. The simulation has one cluster: more than
  // one partition is something it does not model (`clustersim validate` warns).
  std::map<std::string, int64_t> partitions;

  // Deadlines, data nodes and node limits of the jobs that have some (Job::constraints).
  std::vector<JobConstraints> constraints;

  // The job's constraints, or nullptr if it has none.
  const JobConstraints* ConstraintsOf(const Job& job) const {
    return job.constraints == 0 ? nullptr : &constraints[job.constraints - 1];
  }
  // The job's entry, created (empty) if it has none yet.
  JobConstraints& MutableConstraintsOf(Job& job) {
    if (job.constraints == 0) {
      constraints.emplace_back();
      job.constraints = static_cast<uint32_t>(constraints.size());
    }
    return constraints[job.constraints - 1];
  }
  // The job's deadline as an absolute time (submit + JobConstraints::deadline), or +inf.
  double DeadlineOf(const Job& job) const {
    const JobConstraints* c = ConstraintsOf(job);
    return c != nullptr && c->has_deadline() ? job.submit_time + c->deadline
                                             : std::numeric_limits<double>::infinity();
  }
  // Unix time (seconds since 1970-01-01 UTC) of the trace's time 0, when the trace says it (an
  // SWF header's UnixStartTime; the earliest submission of a wall-clock format); NaN = unknown.
  // Site models with dates and weekly calendars need it (docs/cluster.md#site-model).
  double unix_origin = std::numeric_limits<double>::quiet_NaN();
};

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_ENGINE_JOB_H_
