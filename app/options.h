// What every clustersim command does with its command line (Boost.Program_options) and with
// Ctrl-C.
#ifndef CLUSTERSIM_APP_OPTIONS_H_
#define CLUSTERSIM_APP_OPTIONS_H_

#include <atomic>
#include <boost/program_options.hpp>
#include <string>

namespace clustersim {

// Parses argv (argv[0] is the command's name) against `desc` and, if given, `positional`, after
// RejectRemovedOptions. Returns false after printing `desc` when --help was asked for (before
// required options are checked); otherwise stores into *vm, notifies and returns true. Boost's own
// errors (unknown option, missing value) propagate for the caller's handler.
bool ParseOptions(int argc, char** argv, const boost::program_options::options_description& desc,
                  boost::program_options::variables_map* vm,
                  const boost::program_options::positional_options_description* positional =
                      nullptr);

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
// pass and commit what they have.
std::atomic<bool>* StopFlag();
void CatchStopSignals();

// --log-level: trace, debug, info, warn, error, critical or off; anything else is an InputError.
void SetLogLevel(const std::string& level);

}  // namespace clustersim

#endif  // CLUSTERSIM_APP_OPTIONS_H_
