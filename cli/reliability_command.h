// `clustersim reliability` (docs/reliability.md#clustersim-reliability): expected interruptions,
// the optimal checkpoint interval and ETTR of one training job of N GPUs, from the closed-form
// model and by simulation side by side, for hot spares 0..k (app/reliability_study.h).
#ifndef CLUSTERSIM_CLI_RELIABILITY_COMMAND_H_
#define CLUSTERSIM_CLI_RELIABILITY_COMMAND_H_

namespace clustersim {

// argv[0] is "reliability". Returns 0; throws InputError for bad options (exit 2 in main).
int CommandReliability(int argc, char** argv);

}  // namespace clustersim

#endif  // CLUSTERSIM_CLI_RELIABILITY_COMMAND_H_
