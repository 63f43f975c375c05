// make_synthetic_trace: writes a seeded synthetic trace in the native CSV format (see
// bench/synthetic_trace.h for the model). Same options, same file, on any platform.
//
//   make_synthetic_trace --jobs 1000000 --gpus 8192 --load 0.9 --seed 42 --out trace.csv
#include <charconv>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "bench/synthetic_trace.h"
#include "sim/error.h"

namespace {

constexpr const char* kUsage =
    "usage: make_synthetic_trace --out FILE [--jobs N (1000000)] [--gpus G (8192)]\n"
    "                            [--load F (0.9)] [--seed S (42)] [--mean-duration SECONDS "
    "(3600)]\n"
    "Writes N jobs (job_id,submit_time,gpus,duration): Poisson arrivals, GPU counts from the\n"
    "Philly distribution, exponential durations; the arrival rate makes the offered load on G\n"
    "GPUs equal to F.\n";

template <typename T>
T ParseNumber(std::string_view flag, std::string_view text) {
  T value{};
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size()) {
    throw clustersim::InputError(std::string(flag) + ": expected a number, got \"" +
                                 std::string(text) + "\"");
  }
  return value;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    clustersim::SyntheticTraceOptions options;
    std::string out;
    for (int i = 1; i < argc; ++i) {
      const std::string_view flag = argv[i];
      if (flag == "--help" || flag == "-h") {
        std::fputs(kUsage, stdout);
        return 0;
      }
      if (i + 1 >= argc) throw clustersim::InputError(std::string(flag) + ": expected a value");
      const std::string_view value = argv[++i];
      if (flag == "--jobs") {
        options.jobs = ParseNumber<int64_t>(flag, value);
      } else if (flag == "--gpus") {
        options.cluster_gpus = ParseNumber<int64_t>(flag, value);
      } else if (flag == "--load") {
        options.load = ParseNumber<double>(flag, value);
      } else if (flag == "--seed") {
        options.seed = ParseNumber<uint64_t>(flag, value);
      } else if (flag == "--mean-duration") {
        options.mean_duration_seconds = ParseNumber<double>(flag, value);
      } else if (flag == "--out") {
        out = value;
      } else {
        throw clustersim::InputError("unknown option " + std::string(flag) + "\n" + kUsage);
      }
    }
    if (out.empty()) throw clustersim::InputError(std::string("--out is required\n") + kUsage);
    clustersim::WriteSyntheticTrace(options, out);
    std::fprintf(
        stderr,
        "wrote %lld jobs to %s (arrival rate %.4f jobs/s, offered load %.3g on %lld GPUs)\n",
        static_cast<long long>(options.jobs), out.c_str(),
        clustersim::ArrivalRatePerSecond(options), options.load,
        static_cast<long long>(options.cluster_gpus));
    return 0;
  } catch (const clustersim::InputError& error) {
    std::fprintf(stderr, "make_synthetic_trace: %s\n", error.what());
    return 2;
  }
}
