// `clustersim compare`, `clustersim sweep` and `clustersim merge` (docs/comparing.md,
// docs/sweep.md).
//
// compare: several policies x placements on one trace and cluster, run in parallel, written to
//   one database (default results/compare.sqlite) and printed side by side (or as CSV).
// sweep: the cross product of a JSON spec, one database per run in a directory, in parallel, by
//   shard, resumable (app/sweep.h).
// merge: joins databases into one (sim/output/merge.h).
//
// Each takes argv with argv[0] = the command name, returns the exit code, and throws InputError
// for bad input (main prints it, exit 2).
#ifndef CLUSTERSIM_CLI_EXPERIMENT_COMMANDS_H_
#define CLUSTERSIM_CLI_EXPERIMENT_COMMANDS_H_

namespace clustersim {

int CommandCompare(int argc, char** argv);
int CommandSweep(int argc, char** argv);
int CommandMerge(int argc, char** argv);

}  // namespace clustersim

#endif  // CLUSTERSIM_CLI_EXPERIMENT_COMMANDS_H_
