#include "bench/synthetic_trace.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>

#include "sim/error.h"

namespace clustersim {
namespace {

// Jobs by GPU count in the Microsoft Philly trace (Jeon et al., ATC'19), as counted for the
// 82k-job trace of DESIGN.md §13: 82,247 jobs in all, mean 1.304 GPUs per job.
struct GpuCount {
  int gpus;
  uint64_t jobs;
};
constexpr std::array<GpuCount, 10> kPhillyGpuCounts = {{{1, 76627},
                                                        {2, 1818},
                                                        {4, 1870},
                                                        {8, 1643},
                                                        {12, 7},
                                                        {16, 199},
                                                        {24, 7},
                                                        {32, 67},
                                                        {64, 6},
                                                        {128, 3}}};

constexpr uint64_t PhillyTotalJobs() {
  uint64_t total = 0;
  for (const GpuCount& c : kPhillyGpuCounts) total += c.jobs;
  return total;
}

// Uniform in [0, 1) from the top 53 bits.
double Uniform01(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

// Exponential with the given mean by inversion: -mean ln(1 - U).
double Exponential(std::mt19937_64& rng, double mean) {
  return -mean * std::log1p(-Uniform01(rng));
}

// Uniform integer in [0, n) without modulo bias (rejection of the incomplete last block).
uint64_t UniformBelow(std::mt19937_64& rng, uint64_t n) {
  const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t x = rng();
  while (x >= limit) x = rng();
  return x % n;
}

int PhillyGpus(std::mt19937_64& rng) {
  uint64_t r = UniformBelow(rng, PhillyTotalJobs());
  for (const GpuCount& c : kPhillyGpuCounts) {
    if (r < c.jobs) return c.gpus;
    r -= c.jobs;
  }
  return kPhillyGpuCounts.back().gpus;  // unreachable
}

// Appends `value` with exactly three decimals (to_chars is correctly rounded, so portable).
void AppendFixed3(double value, std::string* out) {
  char buffer[64];
  const auto result =
      std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::fixed, 3);
  out->append(buffer, result.ptr);
}

void AppendInt(int64_t value, std::string* out) {
  char buffer[24];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  out->append(buffer, result.ptr);
}

}  // namespace

double PhillyMeanGpus() {
  uint64_t gpus = 0;
  for (const GpuCount& c : kPhillyGpuCounts) gpus += c.jobs * static_cast<uint64_t>(c.gpus);
  return static_cast<double>(gpus) / static_cast<double>(PhillyTotalJobs());
}

double ArrivalRatePerSecond(const SyntheticTraceOptions& options) {
  return options.load * static_cast<double>(options.cluster_gpus) /
         (PhillyMeanGpus() * options.mean_duration_seconds);
}

void WriteSyntheticTrace(const SyntheticTraceOptions& options, const std::string& path) {
  if (options.jobs < 0) throw InputError("--jobs: expected a count >= 0");
  if (options.cluster_gpus <= 0) throw InputError("--gpus: expected a count > 0");
  if (!(options.load > 0) || !std::isfinite(options.load)) {
    throw InputError("--load: expected a finite fraction > 0");
  }
  if (!(options.mean_duration_seconds > 0) || !std::isfinite(options.mean_duration_seconds)) {
    throw InputError("--mean-duration: expected finite seconds > 0");
  }
  const std::string temporary = path + ".partial";
  std::FILE* file = std::fopen(temporary.c_str(), "wb");
  if (file == nullptr) throw InputError(path, 0, 0, "cannot write the trace file");

  std::mt19937_64 rng(options.seed);
  const double mean_interarrival_seconds = 1.0 / ArrivalRatePerSecond(options);
  std::string chunk = "job_id,submit_time,gpus,duration\n";
  constexpr size_t kChunkBytes = 1 << 20;
  chunk.reserve(kChunkBytes + 256);
  bool ok = true;
  double submit_seconds = 0;
  for (int64_t i = 0; i < options.jobs; ++i) {
    // Draw order per job is fixed (interarrival, GPUs, duration) so traces are reproducible.
    submit_seconds += Exponential(rng, mean_interarrival_seconds);
    const int gpus = PhillyGpus(rng);
    const double duration_seconds = Exponential(rng, options.mean_duration_seconds);
    chunk += 'j';
    AppendInt(i, &chunk);
    chunk += ',';
    AppendFixed3(submit_seconds, &chunk);
    chunk += ',';
    AppendInt(gpus, &chunk);
    chunk += ',';
    AppendFixed3(duration_seconds, &chunk);
    chunk += '\n';
    if (chunk.size() >= kChunkBytes) {
      ok = ok && std::fwrite(chunk.data(), 1, chunk.size(), file) == chunk.size();
      chunk.clear();
    }
  }
  ok = ok && std::fwrite(chunk.data(), 1, chunk.size(), file) == chunk.size();
  ok = (std::fclose(file) == 0) && ok;
  std::error_code error;
  if (ok) std::filesystem::rename(temporary, path, error);
  if (!ok || error) {
    std::filesystem::remove(temporary, error);
    throw InputError(path, 0, 0, "cannot write the trace file");
  }
}

}  // namespace clustersim
