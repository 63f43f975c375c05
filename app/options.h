// What every clustersim command does with its command line (Boost.Program_options) and with
// Ctrl-C.
#ifndef CLUSTERSIM_APP_OPTIONS_H_
#define CLUSTERSIM_APP_OPTIONS_H_

#include <atomic>
#include <boost/program_options.hpp>
#include <string>
#include <vector>

namespace clustersim {

// Parses argv (argv[0] is the command's name) against `desc` and, if given, `positional`, after
// RejectRemovedOptions. Returns false after printing `desc` when --help was asked for (before
// required options are checked); otherwise stores into *vm, notifies and returns true. Boost's own
// errors (unknown option, missing value) propagate for the caller's handler.
bool ParseOptions(int argc, char** argv, const boost::program_options::options_description& desc,
                  boost::program_options::variables_map* vm,
                  const boost::program_options::positional_options_description* positional =
                      nullptr);

// What ParseOptions does before --help: RejectRemovedOptions, then parses argv into *vm without
// notifying. An unknown option is an InputError naming the nearest valid one ("did you mean
// --policy?"); abbreviations of option names are not accepted. `argv[0]` names the command in
// messages.
void StoreOptions(
    int argc, char** argv, const boost::program_options::options_description& desc,
    boost::program_options::variables_map* vm,
    const boost::program_options::positional_options_description* positional = nullptr);
// The same for options given as words ("--window", "0:10", ...; the Python module's filters).
void StoreOptions(const std::vector<std::string>& args,
                  const boost::program_options::options_description& desc,
                  boost::program_options::variables_map* vm, const std::string& command);

// Throws InputError naming the replacement if argv holds an option clustersim no longer takes
// (--load-scale, whose factor multiplied the gaps between arrivals: now --load-factor, whose
// factor multiplies the arrival rate). ParseOptions calls it.
void RejectRemovedOptions(int argc, char** argv);

// A time option in the duration syntax of sim/util/duration.h (a number of seconds, or with s,
// min, h or d), stored as seconds in *seconds when the options are notified; a plain number
// counts `plain_unit_seconds` (3600 for the options in hours). `name` ("--stop-time") names it
// in errors. Give a default as text, as the help shows it:
// DurationValue(...)->default_value("300").
boost::program_options::typed_value<std::string>* DurationValue(const std::string& name,
                                                                double* seconds,
                                                                double plain_unit_seconds = 1);

// Ctrl-C (SIGINT) and SIGTERM set the flag StopFlag() points to once CatchStopSignals() has run;
// a command hands it to its engines (EngineOptions::interrupt), which end their runs at the next
// pass and commit what they have. A second signal does not wait: the registered temporary files
// (sim/util/temporary_files.h) are removed and the process ends as the signal ends it.
std::atomic<bool>* StopFlag();
void CatchStopSignals();
// For commands with nothing to commit when stopped (trace generate and convert, merge, plan's
// CSV): SIGINT and SIGTERM remove the registered temporary files and end the process.
void RemoveTemporariesOnSignal();

// --log-level: trace, debug, info, warn, error, critical or off; anything else is an InputError.
void SetLogLevel(const std::string& level);

}  // namespace clustersim

#endif  // CLUSTERSIM_APP_OPTIONS_H_
