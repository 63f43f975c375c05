// The seeded synthetic workload generator (docs/workloads.md#synthetic-traces; `clustersim trace
// generate`). It writes a trace in the native CSV format:
// - GPUs per job: the Philly trace's empirical distribution;
// - durations: exponential with a given mean, or the Philly trace's empirical distribution
//   (inverse CDF interpolated linearly between its percentiles);
// - an optional model mix (model name: weight), written to a `model` column;
// - optional requested wall times ("modal"), written to a `walltime` column: the run time times
//   an overestimate 1 + X, X exponential with mean 1, rounded up to the next of the values users
//   pick most (5, 10, 15, 20, 30 min, 1, 2, 3, 4, 6, 8, 12, 18, 24, 36, 48 h, then whole days),
//   after Tsafrir, Etsion and Feitelson, "Modeling User Runtime Estimates", JSSPP 2005 (a few
//   round values cover most requests; most jobs use a fraction of what they request);
// - arrivals over a span set from the drawn jobs, so the trace's offered load is the target:
//   load = sum of GPUs x duration / (cluster GPUs x arrival span), the arrival span being from the
//   first submission (at 0) to the last (at the span), exactly as `trace stats` measures it. The
//   jobs are drawn first; the span is their GPU-seconds / (load x GPUs). Between the two ends
//   the arrivals are those of a Poisson process conditioned on its count: n - 1 exponential gaps
//   normalized to the span (uniform spacings). "diurnal" arrivals are the same points in the time
//   of a real arrival curve's cumulative rate (by default the Helios Venus cluster's GPU-job
//   submissions per 10 minutes, traces/helios/lucid_venus_cluster_throughput_10min.csv, repeated
//   past its end): a non-homogeneous Poisson process conditioned on its count, mapped back by the
//   inverse of the cumulative rate. The offered load is thus the target up to the file's 3
//   decimals for every seed and job count (it used to be met only in expectation: 0.85 to 0.92
//   for a target of 0.9 with Philly durations).
// The output is a pure function of the options: draws come from std::mt19937_64 (whose output the
// standard fixes) through our own inversion and integer sampling, never std::*_distribution, and
// numbers are printed with fixed precision by std::to_chars.
#ifndef CLUSTERSIM_WORKLOADS_GENERATOR_H_
#define CLUSTERSIM_WORKLOADS_GENERATOR_H_

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace clustersim {

struct GeneratorOptions {
  int64_t jobs = 1'000'000;
  int64_t cluster_gpus = 8192;  // the GPUs the offered load is computed on
  double load = 0.9;            // target offered load
  uint64_t seed = 42;
  std::string arrivals = "poisson";     // poisson | diurnal
  std::string curve_path;               // diurnal curve CSV; empty = the bundled Helios curve
  std::string durations = "exponential";  // exponential | philly
  double mean_duration_seconds = 3600;    // for exponential durations
  std::vector<std::pair<std::string, double>> models;  // model mix; empty = no model column
  std::string walltimes = "none";  // none | modal (a walltime column; see the file comment)
  // Called with the fraction of the jobs written, in [0, 1], after every megabyte written
  // (`clustersim trace generate`'s progress line); empty = none.
  std::function<void(double)> progress;
};

// The requested wall time "modal" gives a job that runs `seconds` with overestimate factor
// `factor` (>= 1): the first popular value >= seconds x factor (see the file comment), in seconds.
double ModalWalltimeSeconds(double seconds, double factor);

// Mean GPUs per job of the Philly distribution (about 1.304).
double PhillyMeanGpus();
// Mean of the generator's Philly duration distribution, seconds.
double PhillyMeanDurationSeconds();
// The mean duration the options imply, seconds.
double MeanDurationSeconds(const GeneratorOptions& options);
// What a generated trace holds, measured as `clustersim trace stats` measures a trace.
struct GeneratedTrace {
  int64_t jobs = 0;
  double first_submit_seconds = 0, last_submit_seconds = 0;
  double gpu_seconds = 0;  // sum of GPUs x duration
  // gpu_seconds / (cluster GPUs x (last - first submission)): the target (up to the file's 3
  // decimals); 0 with fewer than two jobs or a span of 0.
  double offered_load = 0;
  double arrivals_per_second = 0;  // (jobs - 1) / span
};

// The size of the file WriteSyntheticTrace would write, in bytes, estimated from the digits its
// columns take on average (within a few percent; the test holds it against written files).
double EstimatedTraceBytes(const GeneratorOptions& options);

// The memory WriteSyntheticTrace holds while it writes, in bytes: every job is drawn before the
// first line is written (the span follows from the jobs' GPU-seconds), 32 bytes a job.
double EstimatedGeneratorMemoryBytes(const GeneratorOptions& options);

// Writes the trace to `path` through a temporary sibling renamed into place and returns what it
// holds. Throws InputError when an option is out of range, the curve cannot be read, the file's
// estimated size (EstimatedTraceBytes) exceeds the space free where it goes, the jobs would not
// fit in the memory available (EstimatedGeneratorMemoryBytes), or the file cannot be written. The temporary file is removed if a signal stops the process
// (sim/util/temporary_files.h).
GeneratedTrace WriteSyntheticTrace(const GeneratorOptions& options, const std::string& path);

// Parses "name:weight,name:weight" (weights > 0). Throws InputError.
std::vector<std::pair<std::string, double>> ParseModelMix(const std::string& text);

// The bundled diurnal curve's path.
std::string DefaultDiurnalCurvePath();

}  // namespace clustersim

#endif  // CLUSTERSIM_WORKLOADS_GENERATOR_H_
