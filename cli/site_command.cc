#include "cli/site_command.h"

#include <cstdio>
#include <fstream>
#include <iostream>

#include "app/options.h"
#include "sim/hardware/cluster.h"
#include "sim/util/error.h"
#include "workloads/reader.h"
#include "workloads/site_inference.h"
#include "workloads/transforms.h"

namespace po = boost::program_options;

namespace clustersim {
namespace {

// "16" (every pool) or "standard=16,large=32".
std::map<std::string, int> ParseNodeSizes(const std::string& text) {
  std::map<std::string, int> sizes;
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t end = text.find(',', begin);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(begin, end - begin);
    const size_t eq = item.find('=');
    const std::string name = eq == std::string::npos ? "" : item.substr(0, eq);
    const std::string value = eq == std::string::npos ? item : item.substr(eq + 1);
    char* rest = nullptr;
    const long n = std::strtol(value.c_str(), &rest, 10);
    if (value.empty() || *rest != '\0' || n < 1 || n > 1'000'000) {
      throw InputError("--node-size " + text +
                       ": expected processors per node, N or POOL=N,... (N >= 1)");
    }
    sizes[name] = static_cast<int>(n);
    begin = end + 1;
  }
  return sizes;
}

}  // namespace

int CommandSiteFrom(int argc, char** argv) {
  std::string path, format, out, node_sizes;
  double split = 0;
  SiteInferenceOptions options;
  double min_downtime = options.min_downtime_seconds;
  po::options_description desc(
      "clustersim site-from LOG [--out spec.json]: infer a starting site model (cluster spec with\n"
      "partitions, sizes, downtime, wall-time kills, per-user limits) from a log's recorded\n"
      "schedule, and say what it rests on (docs/cluster.md#site-from)\n\noptions");
  desc.add_options()("help,h", "show this help")("trace", po::value(&path), "the log")(
      "format", po::value(&format), "its format (default: detect)")(
      "out", po::value(&out),
      "write the cluster spec here (default: print it, the report going to stderr)")(
      "gpu-type", po::value(&options.gpu_type)->default_value(options.gpu_type),
      "catalog type of the spec's nodes (a CPU log counts processors as GPUs)")(
      "node-size", po::value(&node_sizes),
      "processors per node: N, or POOL=N,... (default: the header's MaxProcs / MaxNodes)")(
      "whole-nodes", po::bool_switch(&options.whole_nodes),
      "jobs hold whole nodes (default: when every job uses a multiple of the node size)")(
      "min-downtime", DurationValue("--min-downtime", &min_downtime)->default_value("6h"),
      "shortest period with nothing running (and jobs waiting) taken as downtime")(
      "min-users-at-cap", po::value(&options.min_users_at_cap)->default_value(3),
      "users that must sit at a running-job maximum in a quarter to call it a limit")(
      "split", po::value(&split),
      "infer from the jobs submitted before the split only, as `validate --calibrate --split` "
      "divides the log (a share of the jobs in (0, 1)): a site model calibrated then knows "
      "nothing of the held-out part");
  po::positional_options_description positional;
  positional.add("trace", 1);
  po::variables_map vm;
  if (!ParseOptions(argc, argv, desc, &vm, &positional)) return 0;
  if (path.empty()) throw InputError("site-from: expected a log (clustersim site-from LOG)");
  if (!node_sizes.empty()) options.node_size = ParseNodeSizes(node_sizes);
  if (!(min_downtime > 0)) throw InputError("--min-downtime: expected a duration > 0");
  if (options.min_users_at_cap < 1) throw InputError("--min-users-at-cap: expected a count >= 1");
  options.min_downtime_seconds = min_downtime;
  HardwareCatalog::Default().Require(options.gpu_type, "--gpu-type", "--gpu-type");
  if (vm.count("split")) CheckSplitShare(split);
  Trace trace = LoadTrace(path, format);
  const size_t log_jobs = trace.jobs.size();
  double split_time = 0;
  if (vm.count("split")) {
    split_time = SplitTime(trace, split, path);
    TraceFilter earlier;  // the jobs submitted before the split
    earlier.window_end = split_time;
    ApplyFilter(earlier, &trace);
    options.observed_until = split_time;
  }
  const InferredSite site = InferSite(trace, ReadLogHeader(path), options);
  const std::string spec = SiteSpecJson(site, options);
  // The spec must load as it is written.
  ClusterSpec::FromJsonText(spec, out.empty() ? "site-from" : out, HardwareCatalog::Default());
  // Without --out the spec is the output (site-from LOG > spec.json) and the report goes to
  // stderr; with it, the report is the output.
  std::ostream& report = out.empty() ? std::cerr : std::cout;
  report << "clustersim site-from: " << path << " (" << log_jobs << " jobs, " << trace.format
         << ")\n";
  if (vm.count("split")) {
    report << "inferred from the " << trace.jobs.size()
           << " jobs submitted before t = " << static_cast<int64_t>(split_time) << " s (--split "
           << split << "); the later ones are not read\n";
  }
  report << SiteReport(site, trace);
  if (out.empty()) {
    std::cout << spec;
    return 0;
  }
  std::ofstream file(out);
  file << spec;
  if (!file.flush()) throw InputError(out, 0, 0, "cannot write the cluster spec");
  std::printf("written to %s\n", out.c_str());
  return 0;
}

}  // namespace clustersim
