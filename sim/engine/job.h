// A job as every trace reader produces it (docs/engine.md#jobs): what was submitted, never what the
// simulator did with it (that is JobRun in sim/engine/engine.h). Times in seconds from the trace's
// origin, GPU counts in whole GPUs.
#ifndef CLUSTERSIM_SIM_ENGINE_JOB_H_
#define CLUSTERSIM_SIM_ENGINE_JOB_H_

#include <cstdint>
#include <string>
#include <vector>

#include "sim/util/symbol.h"

namespace clustersim {

using JobId = int32_t;  // index of the job in the trace after sorting by submit time
inline constexpr JobId kNoJob = -1;

struct Job {
  std::string id;           // as in the trace
  double submit_time = 0;   // seconds
  int gpus = 0;             // GPUs requested
  double duration = 0;      // run time in the trace, seconds (on the reference GPU type)
  double walltime = -1;     // requested wall time, seconds; < 0 = not given
  int64_t line = 0;         // line of the record in its source file (for messages)
  int gpu_type_column = 0;  // column of the gpu_type field in that line, 0 = unknown
  int priority = 0;
  int batch_size = 0;  // 0 = unknown
  int gpu_milli = 0;   // share of one GPU in thousandths (fractional requests, gpus == 1);
                       // 0 = whole GPUs. Without GPU sharing a fractional job holds a GPU.
  int cpu_milli = 0;   // CPU demand in thousandths of a core; 0 = unknown
  Symbol gpu_type;     // allowed GPU types separated by '|'; empty = any
  Symbol user;
  Symbol vc;            // virtual cluster / group
  Symbol model;         // model name, empty = unknown
  Symbol precision;     // fp32, tf32, mixed-fp16 or mixed-bf16; empty = the model's default
  int sequence_length = 0;  // tokens per sample (or image pixels per side); 0 = model default
  Symbol trace_status;  // status recorded in the trace, empty = unknown
};

struct Trace {
  std::string path;
  std::string format;
  std::string sha256;
  // Sorted by (submit_time, input order); JobId is the index here.
  std::vector<Job> jobs;
  // True if the reader guaranteed that no two jobs share an id (it rejects duplicates).
  bool ids_unique = false;
};

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_ENGINE_JOB_H_
