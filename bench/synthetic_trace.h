// Synthetic traces for benchmarks: N jobs in the native CSV format (job_id,submit_time,gpus,
// duration), Poisson arrivals, GPU counts drawn from the Philly trace's distribution and
// exponential durations, with the arrival rate chosen so the offered load on a given number of
// GPUs is a given fraction. Shared by the `make_synthetic_trace` tool and the benchmarks.
//
// The output is a pure function of the options: draws come from std::mt19937_64 (whose output the
// standard fixes) through our own inversion and integer sampling, never through std::*_distribution
// (whose output is implementation-defined), and numbers are printed with a fixed precision.
#ifndef CLUSTERSIM_BENCH_SYNTHETIC_TRACE_H_
#define CLUSTERSIM_BENCH_SYNTHETIC_TRACE_H_

#include <cstdint>
#include <string>

namespace clustersim {

struct SyntheticTraceOptions {
  int64_t jobs = 1'000'000;
  int64_t cluster_gpus = 8192;  // the GPUs the offered load is computed on
  double load = 0.9;            // offered load: arrival rate x E[gpus] x E[duration] / GPUs
  uint64_t seed = 42;
  double mean_duration_seconds = 3600;  // mean of the exponential durations
};

// Mean GPUs per job of the Philly distribution (about 1.304).
double PhillyMeanGpus();

// Returns the Poisson arrival rate in jobs per second that gives `options.load`:
// load x cluster_gpus / (E[gpus] x mean_duration_seconds).
double ArrivalRatePerSecond(const SyntheticTraceOptions& options);

// Writes the trace to `path` (through a temporary sibling renamed into place, so a reader never
// sees half a file). Throws InputError when the options are out of range or the file cannot be
// written.
void WriteSyntheticTrace(const SyntheticTraceOptions& options, const std::string& path);

}  // namespace clustersim

#endif  // CLUSTERSIM_BENCH_SYNTHETIC_TRACE_H_
