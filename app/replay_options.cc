#include "app/replay_options.h"

#include <cstdio>
#include <string>

#include "app/options.h"
#include "sim/engine/priority_class.h"
#include "sim/util/duration.h"
#include "sim/util/error.h"

namespace po = boost::program_options;

namespace clustersim {
namespace {

std::string SecondsText(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", seconds);
  return text;
}

}  // namespace

void AddReplayOptions(po::options_description& desc, RunConfig& config) {
  po::options_description group("replay: cluster, clock, preemption cost, failures and checkpoints");
  group.add_options()(
      "format", po::value(&config.trace_format), "trace format (default: detect from the header)")(
      "cluster", po::value(&config.cluster)->default_value("default"),
      "cluster spec JSON file or preset name")("hardware", po::value(&config.hardware_path),
                                               "hardware catalog JSON (default: built in)")(
      "seed", po::value(&config.seed)->default_value(0), "random seed")(
      "autoscaler", po::value(&config.autoscaler)->default_value("none"),
      "how the cluster spec's node pools grow and shrink: none (they keep their start size), "
      "cluster-autoscaler or target-utilization (clustersim list autoscalers; "
      "docs/autoscaling.md)")(
      "interval",
      DurationValue("--interval", &config.engine.timeseries_interval_seconds)->default_value("300"),
      "timeseries interval (durations: seconds, or with s, min, h, d: 300, 5min, 1h)")(
      "stop-time", DurationValue("--stop-time", &config.engine.stop_time),
      "stop the clock at this simulated time (a duration: 100h, 3d)")(
      "preemption-cost",
      DurationValue("--preemption-cost", &config.engine.preemption_cost_seconds)
          ->default_value(SecondsText(kDefaultPreemptionCostSeconds)),
      "checkpoint save + restore paid by each preempted, resized or migrated job (a duration; "
      "default from published measurements, docs/engine.md#preemption-cost; 0 = free)")(
      "bsld-threshold", po::value(&config.bsld_threshold_seconds)->default_value(10),
      "bounded slowdown max(1, JCT / max(run time, T)): T in seconds")(
      "node-mtbf", po::value(&config.node_mtbf),
      "node failures: mean time between failures per node, \"T\" or \"TYPE=T,...\"; a plain "
      "number is hours (2000 = 2000h; 90d); each seed draws other failure times")(
      "gpu-mtbf", po::value(&config.gpu_mtbf),
      "single-GPU failures: mean time between failures per GPU (same forms; plain = hours)")(
      "mttr", DurationValue("--mttr", &config.engine.faults.mttr_seconds, kSecondsPerHour),
      "time until a failed node or GPU is repaired; a plain number is hours (default 4 = 4h)")(
      "failure-trace", po::value(&config.failure_trace),
      "failures from a CSV file: time,node,duration[,gpu] (seconds)")(
      "failure-model", po::value(&config.failure_model),
      "failures by cause and domain at published rates: fleet (Llama 3's 419 interruptions on "
      "16,384 H100s) or a JSON file (docs/reliability.md); default: none")(
      "checkpoint-policy", po::value(&config.checkpoint_policy)->default_value("fixed"),
      "checkpoint interval per job: fixed (--checkpoint-interval), young or daly (the optimum "
      "from the job's failure rate and checkpoint time)")(
      "checkpoint-async", po::bool_switch(&config.engine.faults.checkpoint.async),
      "asynchronous checkpoints: a short copy stalls training, the write overlaps it at a "
      "slowdown, and a checkpoint counts once written")(
      "async-blocking",
      po::value(&config.engine.faults.checkpoint.async_blocking)
          ->default_value(6.3 / 148.8, "0.042"),
      "share of the synchronous save time an asynchronous checkpoint still stalls training")(
      "async-slowdown",
      po::value(&config.engine.faults.checkpoint.async_slowdown)->default_value(0.035, "0.035"),
      "training slowdown while an asynchronous checkpoint is written (a share of its speed)")(
      "checkpoint-interval",
      DurationValue("--checkpoint-interval", &config.engine.faults.checkpoint_interval_seconds),
      "computing time between a job's checkpoints (a duration; default: none, a failure loses "
      "all)")("checkpoint-cost",
              DurationValue("--checkpoint-cost", &config.engine.faults.checkpoint_cost_seconds)
                  ->default_value("0"),
              "time each checkpoint save takes, without progress (a duration)")(
      "restore-cost",
      DurationValue("--restore-cost", &config.engine.faults.restore_cost_seconds)
          ->default_value("0"),
      "time a job restarted after a failure spends restoring its checkpoint (a duration)")(
      "defrag", po::bool_switch(&config.engine.defrag),
      "defragment by migration: when the first waiting job does not fit but would if running "
      "jobs moved to other free GPUs, move the fewest, each paying the preemption cost, if its "
      "GPU-seconds gained exceed theirs lost (fcfs; docs/defragmentation.md)")(
      "check", po::bool_switch(&config.engine.check_invariants),
      "verify engine invariants after every pass (slow)");
  desc.add(group);
  po::options_description limits("constraints: deadlines, data locality, node limits "
                                 "(docs/deadlines.md)");
  limits.add_options()(
      "deadlines", po::value(&config.deadlines),
      "give jobs without a deadline one: factor=LO:HI[,share=S] = lambda x duration after the "
      "submission, lambda uniform in [LO, HI] (seeded by --seed)")(
      "mig-from-shares", po::bool_switch(&config.mig_from_shares),
      "a job asking for a share of one GPU (gpu_milli) asks for the smallest MIG profile of the "
      "cluster's MIG GPU type holding it instead (docs/mig.md#from-gpu-shares)")(
      "data-nodes", po::value(&config.data_nodes),
      "give jobs without data nodes some: replicas=R[,by=vc|user|job] = R nodes per virtual "
      "cluster, user or job (seeded by --seed)")(
      "locality-alpha",
      po::value(&config.engine.constraints.locality_alpha)->default_value(1.0, "1"),
      "fraction of a job's GPUs that must be on its data nodes")(
      "max-nodes-per-job",
      po::value(&config.engine.constraints.max_nodes_per_job)->default_value(0),
      "most nodes a job may span (a job's max_nodes column may ask fewer); 0 = no limit");
  desc.add(limits);
}

void CheckReplayOptions(const RunConfig& config) {
  if (config.engine.preemption_cost_seconds < 0) {
    throw InputError("--preemption-cost: expected a number of seconds >= 0");
  }
  if (!(config.engine.timeseries_interval_seconds > 0)) {
    throw InputError("--interval: expected a positive number of seconds");
  }
}

void AddModelOptions(po::options_description& desc, ModelConfig& models) {
  po::options_description group("model-aware simulation (GPU memory, OOM, batch, sharing)");
  group.add_options()(
      "model-aware", po::bool_switch(&models.enabled),
      "simulate GPU memory: OOM failures at the user's batch, batch-aware rates, sharing")(
      "assign-models", po::bool_switch(&models.assign),
      "give jobs without a model one and a batch (seeded by --seed); implies --model-aware")(
      "models", po::value(&models.catalog_path), "model catalog JSON (default: built in)")(
      "oom-startup",
      DurationValue("--oom-startup", &models.options.oom_startup_seconds)->default_value("120"),
      "time a job runs before running out of memory (a duration)")(
      "oom-retries", po::value(&models.options.oom_retries)->default_value(4),
      "resubmissions after running out of GPU memory (with half the batch in model-aware "
      "runs; as they are under --param overcommit); one more ends the job oom-failed")(
      "colocation-speed", po::value(&models.options.colocation_speed)->default_value(0.7, "0.7"),
      "speed of each of two jobs sharing one GPU, (0, 1]")(
      "storage-gbps", po::value(&models.options.storage_gbps)->default_value(0),
      "checkpoint storage bandwidth, GB/s: a modelled job's save/restore = state bytes / it")(
      "user-batches", po::value(&models.user_batches)->default_value("recipe"),
      "assigned users' per-GPU batches: recipe (the model's published recipe, or half or twice "
      "it), reference (the recipe) or uniform (powers of two over the model's range)")(
      "batch-choice", po::value(&models.batch_choice)->default_value("user"),
      "batch a non-elastic policy starts a modelled job at: user, or optimal (the "
      "goodput-maximizing batch for its allocation)");
  desc.add(group);
}

void AddFilterOptions(po::options_description& desc, FilterArgs& args) {
  desc.add_options()("window", po::value(&args.window),
                     "keep jobs submitted in START:END, durations from the trace's start (either "
                     "may be empty): 0:3600, 2d:3d")("vc", po::value(&args.vc),
                                                     "keep these virtual clusters (comma list)")(
      "user", po::value(&args.user), "keep these users (comma list)")(
      "status", po::value(&args.status), "keep these trace statuses (comma list)")(
      "first", po::value(&args.first), "keep the first N jobs in submission order")(
      "load-factor", po::value(&args.load_factor)->default_value(1.0, "1"),
      "multiply the arrival rate by F (gaps between submissions / F): 2 = twice the load")(
      "map-gpu", po::value(&args.map_gpu), "rename GPU types: OLD=NEW[,OLD=NEW...]")(
      "submit-is-start", po::bool_switch(&args.submit_is_start),
      "the trace's submit times are its recorded start times (a log recording starts, not "
      "waits, e.g. NASA iPSC/860): the recorded schedule of jobs without one")(
      "no-host-demands", po::bool_switch(&args.no_host_demands),
      "drop the jobs' CPU and host-memory demands (GPU-only placement)");
  desc.add_options()("priority-map", po::value(&args.priority_map),
                     "levels of the trace's priority classes (openb qos, SWF queue): "
                     "NAME=LEVEL,... (higher = more urgent; docs/policies.md#priority)");
}

TraceFilter MakeFilter(const FilterArgs& args) {
  TraceFilter filter;
  if (!args.window.empty()) ParseWindow(args.window, &filter);
  filter.vcs = ParseList(args.vc);
  filter.users = ParseList(args.user);
  filter.statuses = ParseList(args.status);
  if (args.first < -1) throw InputError("--first: expected a count >= 0");
  filter.first_n = args.first;
  filter.load_factor = args.load_factor;
  if (!args.map_gpu.empty()) filter.gpu_type_map = ParseGpuMap(args.map_gpu);
  filter.submit_is_start = args.submit_is_start;
  filter.drop_host_demands = args.no_host_demands;
  if (!args.priority_map.empty()) {
    filter.priority_map = ParsePriorityMap(args.priority_map, "--priority-map");
  }
  return filter;
}

}  // namespace clustersim
