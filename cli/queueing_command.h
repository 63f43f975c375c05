// `clustersim queueing --lambda L --mu M --c C`: the M/M/c figures of sim/models/queueing.h (Erlang
// C) for given rates, in whatever time unit the rates use.
#ifndef CLUSTERSIM_CLI_QUEUEING_COMMAND_H_
#define CLUSTERSIM_CLI_QUEUEING_COMMAND_H_

namespace clustersim {

// argv[0] is "queueing". Returns the exit code; throws InputError for bad options.
int CommandQueueing(int argc, char** argv);

}  // namespace clustersim

#endif  // CLUSTERSIM_CLI_QUEUEING_COMMAND_H_
