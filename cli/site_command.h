// `clustersim site-from LOG`: a starting site model inferred from a log's recorded schedule
// (workloads/site_inference.h, docs/cluster.md#site-from): the cluster spec, and a report of
// what was inferred and how sure it is.
#ifndef CLUSTERSIM_CLI_SITE_COMMAND_H_
#define CLUSTERSIM_CLI_SITE_COMMAND_H_

namespace clustersim {

// argv[0] is "site-from". Returns the exit code; throws InputError for bad input.
int CommandSiteFrom(int argc, char** argv);

}  // namespace clustersim

#endif  // CLUSTERSIM_CLI_SITE_COMMAND_H_
