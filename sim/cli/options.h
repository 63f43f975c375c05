// What every clustersim command does with its command line (Boost.Program_options).
#ifndef CLUSTERSIM_SIM_CLI_OPTIONS_H_
#define CLUSTERSIM_SIM_CLI_OPTIONS_H_

#include <boost/program_options.hpp>
#include <string>

namespace clustersim {

// Parses argv (argv[0] is the command's name) against `desc` and, if given, `positional`.
// Returns false after printing `desc` when --help was asked for (before required options are
// checked); otherwise stores into *vm, notifies and returns true. Boost's own errors (unknown
// option, missing value) propagate for the caller's handler.
bool ParseOptions(int argc, char** argv, const boost::program_options::options_description& desc,
                  boost::program_options::variables_map* vm,
                  const boost::program_options::positional_options_description* positional =
                      nullptr);

// --log-level: trace, debug, info, warn, error, critical or off; anything else is an InputError.
void SetLogLevel(const std::string& level);

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_CLI_OPTIONS_H_
