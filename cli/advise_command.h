// `clustersim advise` (docs/models.md#batch-size-advice, usable on its own) and
// `clustersim list models`. The models themselves live in the library (sim/models/model_catalog.h,
// sim/models/memory_model.h, sim/models/goodput.h); this file only parses options and prints.
#ifndef CLUSTERSIM_CLI_ADVISE_COMMAND_H_
#define CLUSTERSIM_CLI_ADVISE_COMMAND_H_

namespace clustersim {

// argv[0] is "advise". Returns the exit code; throws InputError for bad input (an unknown model
// or GPU lists the valid names; a model that does not fit at batch 1 says which TP x PP would).
int CommandAdvise(int argc, char** argv);

// Prints the model catalog (`--models FILE` replaces the built-in one); `verbose` adds sources.
void PrintModelList(const char* models_path, bool verbose);

}  // namespace clustersim

#endif  // CLUSTERSIM_CLI_ADVISE_COMMAND_H_
