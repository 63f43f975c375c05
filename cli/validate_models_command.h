// `clustersim validate-models`: the memory and throughput models (sim/models) against the published
// measurements of sim/data/validation/ (sim/models/validation.h). Prints the error aggregates of
// the held-out and calibration rows by GPU type, model, scale, source and precision, the large
// language models' utilization, every memory bracket, and optionally writes every row to CSV;
// `--fit` prints the efficiency tables fitted to the calibration rows.
#ifndef CLUSTERSIM_CLI_VALIDATE_MODELS_COMMAND_H_
#define CLUSTERSIM_CLI_VALIDATE_MODELS_COMMAND_H_

namespace clustersim {

// argv[0] is "validate-models". Returns the exit code; throws InputError for bad input.
int CommandValidateModels(int argc, char** argv);

}  // namespace clustersim

#endif  // CLUSTERSIM_CLI_VALIDATE_MODELS_COMMAND_H_
