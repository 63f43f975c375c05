// `clustersim report DB [--run ID ...] [--by user|vc|gpu_type|priority|policy] [--csv]`: per-group
// accounting of the runs in a results database (sim/output/report.h), as a table or CSV.
// Takes argv with argv[0] = "report", returns the exit code; bad input throws InputError.
#ifndef CLUSTERSIM_CLI_REPORT_COMMAND_H_
#define CLUSTERSIM_CLI_REPORT_COMMAND_H_

namespace clustersim {

int CommandReport(int argc, char** argv);

}  // namespace clustersim

#endif  // CLUSTERSIM_CLI_REPORT_COMMAND_H_
