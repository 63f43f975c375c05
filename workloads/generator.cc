#include "workloads/generator.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>
#include <sstream>

#include "sim/util/error.h"
#include "sim/util/output_path.h"
#include "sim/util/random.h"
#include "sim/util/suggest.h"
#include "sim/util/temporary_files.h"
#include "workloads/reader.h"
#include "workloads/trace_csv.h"

namespace clustersim {
namespace {

// Jobs by GPU count in the Microsoft Philly trace (pollux_philly.csv, 82,247 jobs).
struct GpuCount {
  int gpus;
  uint64_t jobs;
};
constexpr std::array<GpuCount, 10> kPhillyGpuCounts = {
    {{1, 76627}, {2, 1818}, {4, 1870}, {8, 1643}, {12, 7}, {16, 199}, {24, 7}, {32, 67}, {64, 6},
     {128, 3}}};

// Percentiles 0, 1, ..., 100 of the Philly job durations in seconds (pollux_philly.csv, linear
// interpolation between closest ranks), computed once from the file.
constexpr std::array<double, 101> kPhillyDurationPercentiles = {
    1,       17,      25,      37,      44,      48,      51,      54,      57,      59,
    61,      62,      64,      65,      66,      68,      69,      70,      71,      73,
    75,      77,      81,      88,      100,     115,     135,     155,     173,     188,
    209,     233,     271,     308,     330,     371,     448,     504,     539,     567,
    599,     643,     690,     743.78,  807,     863,     900,     948,     1008,    1075,
    1144,    1204,    1279,    1358.38, 1429,    1474,    1511,    1558,    1622,    1725,
    1821,    1888,    1953,    2016,    2069,    2140,    2262,    2366,    2441,    2495.74,
    2549,    2593,    2648,    2708,    2779,    2932,    3355,    3536,    3795.88, 4015,
    4243.8,  4695,    5150,    5433,    5689,    5903,    6217.56, 7944.02, 8959.96, 10239.9,
    11264.8, 13138.9, 15811.3, 21145.6, 28374.7, 43646.2, 61595.1, 92035.7, 147809,  254758,
    4.62823e+06};

uint64_t PhillyTotalJobs() {
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

int PhillyGpus(std::mt19937_64& rng) {
  uint64_t r = UniformBelow(rng, PhillyTotalJobs());
  for (const GpuCount& c : kPhillyGpuCounts) {
    if (r < c.jobs) return c.gpus;
    r -= c.jobs;
  }
  return kPhillyGpuCounts.back().gpus;
}

double PhillyDuration(std::mt19937_64& rng) {
  const double position = Uniform01(rng) * 100;
  const int lo = static_cast<int>(position);
  const double fraction = position - lo;
  return kPhillyDurationPercentiles[lo] +
         fraction * (kPhillyDurationPercentiles[lo + 1] - kPhillyDurationPercentiles[lo]);
}

// The requested wall times users pick most, in seconds (Tsafrir, Etsion and Feitelson, JSSPP 2005:
// estimates cluster on round values; the list extends theirs to the 48 h limits of today's
// clusters). Beyond the last, whole days.
constexpr std::array<double, 16> kPopularWalltimes = {
    300,   600,   900,   1200,  1800,  3600,  7200,   10800,
    14400, 21600, 28800, 43200, 64800, 86400, 129600, 172800};

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

// The diurnal curve: relative arrival rates per 10-minute slot, normalized to mean 1. Reads the
// `submit_gpu_job` column of a Helios throughput file (or the second column of any CSV with a
// header whose first column is the slot's time).
std::vector<double> ReadCurve(const std::string& path) {
  LineReader in(path);
  std::string_view view;
  std::string line;
  if (in.Next(&view)) line = view;
  int column = 1;
  {
    std::stringstream header(line);
    std::string name;
    for (int i = 0; std::getline(header, name, ','); ++i) {
      if (name == "submit_gpu_job") column = i;
    }
  }
  std::vector<double> curve;
  int64_t line_number = 1;
  while (in.Next(&view)) {
    line = view;
    ++line_number;
    if (line.empty()) continue;
    std::stringstream fields(line);
    std::string field;
    for (int i = 0; i <= column && std::getline(fields, field, ','); ++i) {
    }
    double v = 0;
    auto [ptr, ec] = std::from_chars(field.data(), field.data() + field.size(), v);
    if (ec != std::errc() || ptr != field.data() + field.size() || v < 0) {
      throw InputError(path, static_cast<int>(line_number), 0,
                       "expected a non-negative count in column " + std::to_string(column + 1));
    }
    curve.push_back(v);
  }
  double sum = 0;
  for (double v : curve) sum += v;
  if (curve.empty() || sum <= 0) throw InputError(path, 0, 0, "the curve has no arrivals");
  for (double& v : curve) v *= curve.size() / sum;
  return curve;
}

}  // namespace

double ModalWalltimeSeconds(double seconds, double factor) {
  const double wanted = seconds * factor;
  for (double value : kPopularWalltimes) {
    if (value >= wanted) return value;
  }
  return std::ceil(wanted / 86400) * 86400;
}

double PhillyMeanGpus() {
  uint64_t gpus = 0;
  for (const GpuCount& c : kPhillyGpuCounts) gpus += c.jobs * static_cast<uint64_t>(c.gpus);
  return static_cast<double>(gpus) / static_cast<double>(PhillyTotalJobs());
}

double PhillyMeanDurationSeconds() {
  // The mean of a piecewise-linear inverse CDF: the average of each segment's end points.
  double sum = 0;
  for (size_t i = 0; i + 1 < kPhillyDurationPercentiles.size(); ++i) {
    sum += (kPhillyDurationPercentiles[i] + kPhillyDurationPercentiles[i + 1]) / 2;
  }
  return sum / 100;
}

double MeanDurationSeconds(const GeneratorOptions& options) {
  return options.durations == "philly" ? PhillyMeanDurationSeconds()
                                       : options.mean_duration_seconds;
}

std::string DefaultDiurnalCurvePath() {
  return BundledTracesDir() + "/helios/lucid_venus_cluster_throughput_10min.csv";
}

std::vector<std::pair<std::string, double>> ParseModelMix(const std::string& text) {
  std::vector<std::pair<std::string, double>> out;
  std::stringstream items(text);
  std::string item;
  while (std::getline(items, item, ',')) {
    const auto colon = item.rfind(':');
    double weight = 0;
    if (colon == std::string::npos || colon == 0 ||
        std::from_chars(item.data() + colon + 1, item.data() + item.size(), weight).ec !=
            std::errc() ||
        !(weight > 0)) {
      throw InputError("--models " + text + ": expected name:weight,... with weights > 0");
    }
    out.emplace_back(item.substr(0, colon), weight);
  }
  return out;
}

namespace {

// Decimal digits of the integer part of x >= 0.
double IntegerDigits(double x) { return x < 10 ? 1 : std::floor(std::log10(x)) + 1; }

// One job's draws, kept until the arrival times are known.
struct DrawnJob {
  double duration_seconds;  // as written (3 decimals)
  int gpus;
  uint32_t model;  // index into GeneratorOptions::models
};

// The value `value` is written as: fixed, 3 decimals.
double AsWritten(double value) { return std::round(value * 1000) / 1000; }

// Arrival times t_0 = 0 <= t_1 <= ... <= t_{n-1} = span of n jobs (see generator.h): the points
// between the ends follow the rate curve (constant for Poisson). `gaps` are the n - 1 unit-mean
// exponential gaps drawn for them; position i is the share sum(gaps[0, i)) / sum(gaps) of the
// cumulative rate Lambda(span), mapped back through Lambda^-1.
std::vector<double> ArrivalTimes(const std::vector<double>& gaps, double span,
                                 const std::vector<double>& curve) {
  const size_t n = gaps.size() + 1;
  std::vector<double> times(n, 0.0);
  if (n == 1) return times;
  double total = 0;
  for (double gap : gaps) total += gap;
  constexpr double kSlotSeconds = 600;  // the curve's 10-minute slots
  auto weight = [&](size_t slot) { return curve[slot % curve.size()]; };
  // Lambda(span) in slot-weighted seconds; without a curve the rate is constant (Lambda(t) = t).
  double lambda_span = span;
  if (!curve.empty()) {
    lambda_span = 0;
    size_t slot = 0;
    for (; (slot + 1) * kSlotSeconds <= span; ++slot) lambda_span += weight(slot) * kSlotSeconds;
    lambda_span += weight(slot) * (span - slot * kSlotSeconds);
  }
  double cumulative = 0;
  size_t slot = 0;
  double lambda_before_slot = 0;  // Lambda at the start of `slot`
  for (size_t i = 1; i + 1 < n; ++i) {
    cumulative += gaps[i - 1];
    if (curve.empty() || !(lambda_span > 0)) {
      // Constant rate, or a curve that is 0 all over [0, span]: uniform spacing in time.
      times[i] = span * (cumulative / total);
      continue;
    }
    const double target = lambda_span * (cumulative / total);
    // Lambda^-1: the earliest time Lambda reaches target; slots only move forward.
    while (lambda_before_slot + weight(slot) * kSlotSeconds < target) {
      lambda_before_slot += weight(slot) * kSlotSeconds;
      ++slot;
    }
    const double into = weight(slot) > 0 ? (target - lambda_before_slot) / weight(slot) : 0;
    times[i] = std::min(span, slot * kSlotSeconds + into);
  }
  times[n - 1] = span;
  return times;
}

// The expected number of integer digits of a drawn duration: E[digits(X)] = 1 + sum over k >= 1
// of P(X >= 10^k). Exact for both distributions: exponential, P(X >= t) = exp(-t / mean); Philly,
// uniform within each of the 100 percentile segments.
double ExpectedDurationDigits(const GeneratorOptions& options) {
  double digits = 1;
  for (double t = 10; t < 1e12; t *= 10) {
    double tail = 0;
    if (options.durations == "philly") {
      for (size_t i = 0; i + 1 < kPhillyDurationPercentiles.size(); ++i) {
        const double a = kPhillyDurationPercentiles[i];
        const double b = kPhillyDurationPercentiles[i + 1];
        tail += (b <= a ? (a >= t ? 1.0 : 0.0) : std::clamp((b - t) / (b - a), 0.0, 1.0)) / 100;
      }
    } else {
      tail = std::exp(-t / options.mean_duration_seconds);
    }
    digits += tail;
  }
  return digits;
}

}  // namespace

double EstimatedTraceBytes(const GeneratorOptions& options) {
  const double n = static_cast<double>(std::max<int64_t>(0, options.jobs));
  // Job ids "j0".."j<n-1>": the digits of every id, summed exactly by decades.
  double id_digits = 0;
  for (double low = 0, high = 10, digits = 1; low < n; low = high, high *= 10, ++digits) {
    id_digits += (std::min(n, high) - low) * digits;
  }
  // Submit times grow to the expected span, n jobs' mean GPU-seconds over load x GPUs: on
  // average about the digits of half of it; fixed to three decimals (".ddd"). Durations: their
  // expected digits (ExpectedDurationDigits), with ".ddd". GPUs: 1 digit for 97 % of Philly's
  // jobs.
  const double span = n * PhillyMeanGpus() * MeanDurationSeconds(options) /
                      std::max(1e-300, options.load * static_cast<double>(options.cluster_gpus));
  const double submit = IntegerDigits(span / 2) + 4;
  const double duration = ExpectedDurationDigits(options) + 4;
  double model = 0;
  double weights = 0;
  for (const auto& [name, weight] : options.models) {
    model += weight * (static_cast<double>(name.size()) + 1);
    weights += weight;
  }
  if (weights > 0) model /= weights;
  const double header = options.models.empty() ? 33 : 39;
  // Per line: 'j', the id, three commas, GPUs, the newline.
  return header + id_digits + n * (1 + submit + 1.03 + duration + 4 + model);
}

double EstimatedGeneratorMemoryBytes(const GeneratorOptions& options) {
  // Every job's draws (DrawnJob) and its arrival time, plus the n - 1 gaps they come from.
  return static_cast<double>(std::max<int64_t>(0, options.jobs)) *
         (sizeof(DrawnJob) + 2 * sizeof(double));
}

GeneratedTrace WriteSyntheticTrace(const GeneratorOptions& options, const std::string& path) {
  if (options.jobs < 0) throw InputError("--jobs: expected a count >= 0");
  if (options.cluster_gpus <= 0) throw InputError("--gpus: expected a count > 0");
  if (!(options.load > 0) || !std::isfinite(options.load)) {
    throw InputError("--load: expected a finite fraction > 0");
  }
  if (options.durations != "exponential" && options.durations != "philly") {
    throw InputError("--durations " + options.durations + ": expected exponential or philly" +
                     DidYouMean(options.durations, {"exponential", "philly"}));
  }
  if (options.walltimes != "none" && options.walltimes != "modal") {
    throw InputError("--walltimes " + options.walltimes + ": expected none or modal");
  }
  if (options.arrivals != "poisson" && options.arrivals != "diurnal") {
    throw InputError("--arrivals " + options.arrivals + ": expected poisson or diurnal" +
                     DidYouMean(options.arrivals, {"poisson", "diurnal"}));
  }
  if (!(options.mean_duration_seconds > 0) || !std::isfinite(options.mean_duration_seconds)) {
    throw InputError("--mean-duration: expected finite seconds > 0");
  }
  std::vector<double> curve;
  if (options.arrivals == "diurnal") {
    curve = ReadCurve(options.curve_path.empty() ? DefaultDiurnalCurvePath() : options.curve_path);
  }
  double model_weight_total = 0;
  for (const auto& [name, weight] : options.models) model_weight_total += weight;

  // A size the disk cannot hold is refused before anything is written.
  const double bytes = EstimatedTraceBytes(options);
  const long long free_bytes = FreeDiskBytes(path);
  if (free_bytes >= 0 && bytes > static_cast<double>(free_bytes)) {
    const std::string folder = std::filesystem::path(path).parent_path().string();
    throw InputError(path, 0, 0,
                     "--jobs " + std::to_string(options.jobs) + ": the trace would take about " +
                         FormatBytes(bytes) + ", more than the " +
                         FormatBytes(static_cast<double>(free_bytes)) +
                         " free on the file system of " +
                         (folder.empty() ? std::string(".") : folder) + "; nothing was written");
  }
  // The jobs are drawn in memory before the first line is written: a count that memory cannot
  // hold is refused before the drawing starts.
  const double memory = EstimatedGeneratorMemoryBytes(options);
  const long long available = AvailableMemoryBytes();
  if (available >= 0 && memory > static_cast<double>(available)) {
    throw InputError(path, 0, 0,
                     "--jobs " + std::to_string(options.jobs) + ": generating it would take about " +
                         FormatBytes(memory) + " of memory, more than the " +
                         FormatBytes(static_cast<double>(available)) +
                         " available; nothing was written");
  }
  // The jobs first (GPUs, duration, model each, in that order), then the n - 1 arrival gaps:
  // the span is known only once the jobs' GPU-seconds are.
  std::mt19937_64 rng(options.seed);
  GeneratedTrace made;
  std::vector<DrawnJob> drawn(static_cast<size_t>(options.jobs));
  for (DrawnJob& job : drawn) {
    job.gpus = PhillyGpus(rng);
    job.duration_seconds = AsWritten(options.durations == "philly"
                                         ? PhillyDuration(rng)
                                         : Exponential(rng, options.mean_duration_seconds));
    job.model = 0;
    if (!options.models.empty()) {
      double r = Uniform01(rng) * model_weight_total;
      while (job.model + 1 < options.models.size() && r >= options.models[job.model].second) {
        r -= options.models[job.model].second;
        ++job.model;
      }
    }
    made.gpu_seconds += job.gpus * job.duration_seconds;
  }
  std::vector<double> gaps(drawn.empty() ? 0 : drawn.size() - 1);
  for (double& gap : gaps) gap = Exponential(rng, 1.0);
  // Offered load = GPU-seconds / (GPUs x span): the span that makes it the target.
  const double span = AsWritten(made.gpu_seconds / (options.load * options.cluster_gpus));
  const std::vector<double> times =
      drawn.empty() ? std::vector<double>() : ArrivalTimes(gaps, span, curve);
  std::vector<double>().swap(gaps);

  const std::string temporary = path + ".partial";
  const RemoveOnSignal remove_on_signal(temporary);
  std::FILE* file = std::fopen(temporary.c_str(), "wb");
  if (file == nullptr) throw InputError(path, 0, 0, "cannot write the trace file");
  // Wall times are drawn last, while writing (after every job and gap), so the other columns
  // are those of the same trace without them.
  const bool walltimes = options.walltimes == "modal";
  std::string chunk = "job_id,submit_time,gpus,duration";
  if (!options.models.empty()) chunk += ",model";
  if (walltimes) chunk += ",walltime";
  chunk += '\n';
  constexpr size_t kChunkBytes = 1 << 20;
  chunk.reserve(kChunkBytes + 256);
  bool ok = true;
  for (size_t i = 0; i < drawn.size(); ++i) {
    const DrawnJob& job = drawn[i];
    chunk += 'j';
    AppendInt(static_cast<int64_t>(i), &chunk);
    chunk += ',';
    AppendFixed3(times[i], &chunk);
    chunk += ',';
    AppendInt(job.gpus, &chunk);
    chunk += ',';
    AppendFixed3(job.duration_seconds, &chunk);
    if (!options.models.empty()) {
      chunk += ',';
      chunk += options.models[job.model].first;
    }
    if (walltimes) {
      chunk += ',';
      AppendInt(static_cast<int64_t>(
                    ModalWalltimeSeconds(job.duration_seconds, 1 + Exponential(rng, 1.0))),
                &chunk);
    }
    chunk += '\n';
    if (chunk.size() >= kChunkBytes) {
      ok = ok && std::fwrite(chunk.data(), 1, chunk.size(), file) == chunk.size();
      chunk.clear();
      if (options.progress) options.progress(static_cast<double>(i + 1) / options.jobs);
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
  made.jobs = options.jobs;
  if (!times.empty()) {
    made.first_submit_seconds = times.front();
    made.last_submit_seconds = times.back();
  }
  if (made.jobs > 1 && span > 0) {
    made.offered_load = made.gpu_seconds / (static_cast<double>(options.cluster_gpus) * span);
    made.arrivals_per_second = static_cast<double>(made.jobs - 1) / span;
  }
  return made;
}

}  // namespace clustersim
