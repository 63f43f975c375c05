// `clustersim allocate-bench`: every allocator of sim/alloc against the exact optimum on seeded
// random and trace-drawn instances (docs/allocators.md): per family of instances and allocator,
// the mean and worst ratio of its objective to the optimum, how often it is optimal, and its time.
#ifndef CLUSTERSIM_CLI_ALLOCATE_BENCH_COMMAND_H_
#define CLUSTERSIM_CLI_ALLOCATE_BENCH_COMMAND_H_

namespace clustersim {

// argv[0] is "allocate-bench". Returns the exit code; throws InputError for bad options.
int CommandAllocateBench(int argc, char** argv);

}  // namespace clustersim

#endif  // CLUSTERSIM_CLI_ALLOCATE_BENCH_COMMAND_H_
