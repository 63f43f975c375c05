// `clustersim validate`: replays a trace that records its real schedule and compares the
// simulated schedule with it (sim/engine/validation.h, docs/validation.md): printed, and written
// to the validation, validation_series and allocations tables with the run. With --search
// key=v1,v2,... it runs every configuration of the cross product and ranks them by their distance
// to the record.
#ifndef CLUSTERSIM_CLI_VALIDATE_COMMAND_H_
#define CLUSTERSIM_CLI_VALIDATE_COMMAND_H_

namespace clustersim {

// argv[0] is "validate". Returns the exit code; throws InputError for bad input.
int CommandValidate(int argc, char** argv);

}  // namespace clustersim

#endif  // CLUSTERSIM_CLI_VALIDATE_COMMAND_H_
