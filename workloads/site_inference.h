// `clustersim site-from LOG` (docs/cluster.md#site-from): a starting site model inferred from a
// log's recorded schedule, and what it rests on. Pure functions of a trace (with its recorded
// starts and ends) and the log's header, if it is an SWF log; nothing is simulated.
//
// What is inferred, each with its evidence:
// - Pools: the log's partitions (Job::partition; one pool when it names none). A queue whose jobs
//   cannot share the machine with the others (the others' recorded peak fits the header's
//   MaxProcs, with it the peak exceeds MaxProcs by more than a tenth) runs on nodes of its own.
// - Node size: as the options give it, else the header's MaxProcs / MaxNodes when that divides.
//   If every job of a pool uses a multiple of it (or the options say so), jobs hold whole nodes:
//   the pool's nodes become one-GPU nodes and processors_per_gpu the node size
//   (docs/cluster.md#site-model); otherwise a GPU is a processor.
// - Size: a pool's nodes = its recorded peak of concurrent use (in nodes), except that a single
//   pool takes the header's MaxNodes when the peak does not exceed it by more than a tenth.
// - Downtime, per pool: periods of at least `min_downtime_seconds` in which none of the pool's
//   recorded jobs runs while some of them wait (submitted before, started after); with several
//   pools, each period holds its pool's partition only.
// - Wall-time kills: among the jobs with a requested time that ran at least as long, the run
//   time past it. If fewer than 5 % of them run more than an hour past it, the site killed at the
//   requested time, with a grace of the 90th percentile of the overrun (rounded up to a minute);
//   otherwise it did not kill.
// - Per-user running-job limit, per calendar quarter of the trace: M is a cap of a quarter if at
//   least `min_users_at_cap` users reach exactly M concurrently running jobs and at most one user
//   runs more; consecutive quarters with the same cap are merged into one limit rule.
#ifndef CLUSTERSIM_WORKLOADS_SITE_INFERENCE_H_
#define CLUSTERSIM_WORKLOADS_SITE_INFERENCE_H_

#include <limits>
#include <map>
#include <string>
#include <vector>

#include "sim/engine/job.h"

namespace clustersim {

// What an SWF header says (the ';' comment lines before the first job); all 0/empty if absent.
struct LogHeader {
  int max_procs = 0;
  int max_nodes = 0;
  double unix_start = 0;
  std::string time_zone;  // TimeZoneString
};
// Reads the header comments of `path` (any format: a file without ';' lines gives nothing).
LogHeader ReadLogHeader(const std::string& path);

struct SiteInferenceOptions {
  std::string gpu_type = "V100-16GB";      // the catalog type of the spec's nodes
  double min_downtime_seconds = 6 * 3600;  // shorter idle periods are not downtime
  int min_users_at_cap = 3;
  // What the operator knows better than the log: processors per node of a pool (by name; the
  // empty name = every pool), and that jobs hold whole nodes.
  std::map<std::string, int> node_size;
  bool whole_nodes = false;
  // The log's record of use is whole only before this time (trace seconds): the earlier part of
  // a split log (site-from --split), whose later jobs ran after it too. Sizes, downtime and
  // limits are inferred from the use before it.
  double observed_until = std::numeric_limits<double>::infinity();
};

struct InferredPool {
  std::string name;
  std::vector<std::string> names;   // the log's partition names it stands for
  std::vector<std::string> queues;  // queues running on it (a queue on nodes of its own)
  int64_t jobs = 0;
  int node_size = 1;              // processors per node
  bool whole_nodes = false;       // every job uses whole nodes
  int nodes = 0;
  int peak_processors = 0;        // recorded peak of concurrent use
  std::string size_evidence;
  double max_requested_seconds = 0;
};

struct InferredSite {
  std::vector<InferredPool> pools;
  struct Down {
    double start = 0, end = 0;  // trace seconds
    int64_t waiting = 0;        // jobs waiting across it
    int pool = 0;               // the pool (index into pools) that was down
  };
  std::vector<Down> downtimes;
  bool kill = true;
  double grace_seconds = 0;
  std::string kill_evidence;
  struct Cap {
    double from = 0, until = 0;  // trace seconds
    int max_running_jobs = 0;
    int users_at_cap = 0;
    int users_above = 0;
  };
  std::vector<Cap> caps;
  std::vector<std::string> notes;  // what the report says beyond the spec
};

// REQUIRES: `trace` keeps every job of the log (no filter), or every job submitted before
// options.observed_until.
InferredSite InferSite(const Trace& trace, const LogHeader& header,
                       const SiteInferenceOptions& options);

// The cluster spec JSON of the inferred site (docs/cluster.md), pretty-printed.
std::string SiteSpecJson(const InferredSite& site, const SiteInferenceOptions& options);

// The report: what was inferred and how sure it is, one finding per paragraph.
std::string SiteReport(const InferredSite& site, const Trace& trace);

}  // namespace clustersim

#endif  // CLUSTERSIM_WORKLOADS_SITE_INFERENCE_H_
