#include "app/options.h"

#include <spdlog/spdlog.h>

#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "sim/util/duration.h"
#include "sim/util/error.h"
#include "sim/util/suggest.h"
#include "sim/util/temporary_files.h"

namespace po = boost::program_options;

namespace clustersim {
namespace {

std::atomic<bool> g_stop{false};

// Removes the registered temporary files (sim/util/temporary_files.h) and ends the process the
// way the signal would have.
void RemoveTemporariesAndDie(int signal) {
  RemoveTemporaryFiles();
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

// The first signal asks the run to stop (it commits what it has); a second one does not wait.
void OnStopSignal(int signal) {
  if (!g_stop.exchange(true)) return;
  RemoveTemporariesAndDie(signal);
}

}  // namespace

std::atomic<bool>* StopFlag() { return &g_stop; }

void CatchStopSignals() {
  std::signal(SIGINT, OnStopSignal);
  std::signal(SIGTERM, OnStopSignal);
}

void RemoveTemporariesOnSignal() {
  std::signal(SIGINT, RemoveTemporariesAndDie);
  std::signal(SIGTERM, RemoveTemporariesAndDie);
}

namespace {

// No abbreviations: "--pol" is not "--policy" (an abbreviation that works today breaks, or
// silently changes meaning, when a later option shares its prefix); an unknown option is an
// error with the nearest name instead.
constexpr int kStyle =
    po::command_line_style::default_style & ~po::command_line_style::allow_guessing;

std::vector<std::string> LongNames(const po::options_description& desc) {
  std::vector<std::string> names;
  for (const auto& option : desc.options()) {
    if (!option->long_name().empty()) names.push_back("--" + option->long_name());
  }
  return names;
}

// Boost's errors about option names, in the user's terms: the option as typed, the nearest
// valid one, and where to find them all.
template <typename Parser>
void StoreWith(Parser& parser, const po::options_description& desc, po::variables_map* vm,
               const std::string& command) {
  try {
    po::store(parser.style(kStyle).run(), *vm);
  } catch (const po::unknown_option& e) {
    std::string given = e.get_option_name();
    const size_t eq = given.find('=');
    if (eq != std::string::npos) given.resize(eq);
    throw InputError("unknown option " + given + DidYouMean(given, LongNames(desc), false) +
                     " (clustersim " + command + " --help lists the options)");
  } catch (const po::too_many_positional_options_error&) {
    throw InputError("clustersim " + command +
                     ": too many arguments without an option name (see clustersim " + command +
                     " --help)");
  }
}

// "trace stats" for the subcommands of trace and "cluster show", whose argv[0] is the
// subcommand's own name.
std::string CommandName(const std::string& argv0) {
  if (argv0 == "stats" || argv0 == "convert" || argv0 == "generate" || argv0 == "cluster-from") {
    return "trace " + argv0;
  }
  if (argv0 == "show") return "cluster show";
  return argv0;
}

}  // namespace

void StoreOptions(int argc, char** argv, const po::options_description& desc, po::variables_map* vm,
                  const po::positional_options_description* positional) {
  RejectRemovedOptions(argc, argv);
  po::command_line_parser parser(argc, argv);
  parser.options(desc);
  if (positional) parser.positional(*positional);
  StoreWith(parser, desc, vm, CommandName(argc > 0 ? argv[0] : ""));
}

void StoreOptions(const std::vector<std::string>& args, const po::options_description& desc,
                  po::variables_map* vm, const std::string& command) {
  po::command_line_parser parser(args);
  parser.options(desc);
  StoreWith(parser, desc, vm, command);
}

bool ParseOptions(int argc, char** argv, const po::options_description& desc, po::variables_map* vm,
                  const po::positional_options_description* positional) {
  StoreOptions(argc, argv, desc, vm, positional);
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
    throw InputError(
        "--log-level " + level + ": expected trace, debug, info, warn, error, critical or off" +
        DidYouMean(level, {"trace", "debug", "info", "warn", "error", "critical", "off"}));
  }
  spdlog::set_level(parsed);
}

}  // namespace clustersim
