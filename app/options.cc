#include "app/options.h"

#include <spdlog/spdlog.h>

#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "sim/util/duration.h"
#include "sim/util/error.h"

namespace po = boost::program_options;

namespace clustersim {
namespace {

std::atomic<bool> g_stop{false};

void OnStopSignal(int) { g_stop.store(true); }

}  // namespace

std::atomic<bool>* StopFlag() { return &g_stop; }

void CatchStopSignals() {
  std::signal(SIGINT, OnStopSignal);
  std::signal(SIGTERM, OnStopSignal);
}

bool ParseOptions(int argc, char** argv, const po::options_description& desc,
                  po::variables_map* vm, const po::positional_options_description* positional) {
  RejectRemovedOptions(argc, argv);
  po::command_line_parser parser(argc, argv);
  parser.options(desc);
  if (positional) parser.positional(*positional);
  po::store(parser.run(), *vm);
  if (vm->count("help")) {
    std::cout << desc << "\n";
    return false;
  }
  po::notify(*vm);
  return true;
}

void RejectRemovedOptions(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg != "--load-scale" && arg.rfind("--load-scale=", 0) != 0) continue;
    std::string value = arg.size() > 13 ? arg.substr(13) : (i + 1 < argc ? argv[i + 1] : "");
    std::string instead = "--load-factor 1/F";
    char* end = nullptr;
    const double scale = std::strtod(value.c_str(), &end);
    if (!value.empty() && *end == '\0' && scale > 0 && std::isfinite(scale)) {
      char buffer[32];
      std::snprintf(buffer, sizeof buffer, "%.6g", 1 / scale);
      instead = std::string("--load-factor ") + buffer;
    }
    throw InputError(
        "--load-scale was removed: its factor multiplied the gaps between arrivals "
        "(0.5 meant twice the load). Use " +
        instead + ": --load-factor multiplies the arrival rate (larger is heavier)");
  }
}

po::typed_value<std::string>* DurationValue(const std::string& name, double* seconds,
                                            double plain_unit_seconds) {
  return po::value<std::string>()->notifier(
      [=](const std::string& text) { *seconds = ParseDuration(text, name, plain_unit_seconds); });
}

void SetLogLevel(const std::string& level) {
  const auto parsed = spdlog::level::from_str(level);
  if (parsed == spdlog::level::off && level != "off") {
    throw InputError("--log-level " + level +
                     ": expected trace, debug, info, warn, error, critical or off");
  }
  spdlog::set_level(parsed);
}

}  // namespace clustersim
