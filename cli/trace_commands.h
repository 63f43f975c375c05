// `clustersim trace stats|convert|generate|cluster-from`.
#ifndef CLUSTERSIM_CLI_TRACE_COMMANDS_H_
#define CLUSTERSIM_CLI_TRACE_COMMANDS_H_

namespace clustersim {

// argv[0] is "trace". Returns the exit code; throws InputError for bad input.
int CommandTrace(int argc, char** argv);

}  // namespace clustersim

#endif  // CLUSTERSIM_CLI_TRACE_COMMANDS_H_
