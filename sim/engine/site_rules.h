// The site model of a run (docs/cluster.md#site-model): the cluster spec's SiteSpec
// (sim/hardware/site.h) resolved against the trace, and the state its limits need. Owned by the
// engine, which asks it at each arrival (Admit), before each start (MayStart; a policy asks the
// same through SchedulingContext::MayStart) and tells it of every start, stop and end.
//
// Resolution, once per run:
// - Each job's partition: the first partition listing the job's queue (Job::priority_class) in
//   `queues`; else the partitions whose `names` hold one of the job's partition names
//   (Job::partition, several separated by ','), the first of them the job's own (its limits,
//   windows and drains apply); else the default partition. A job may use the nodes of every
//   partition it names (type_mask). Jobs naming partitions the site does not model run in the
//   default partition, and the run says so (Warnings).
// - Request size: ceil(processors / the partition's processors_per_gpu).
// - Times: dates become trace seconds with the trace's Unix origin and the site's UTC offset;
//   weekly calendars are evaluated on the local clock unix_origin + t + utc_offset.
//
// A job's plan (how long it will hold its nodes, for run windows, drains and downtime) is its
// requested wall time (Policy::RequestedWalltime), else its partition's default_time, else the
// partition's max_time, else its trace duration (as the backfilling policies plan).
//
// Rules at submission (Admit; a job failing one is rejected with the reason): the partition's
// max_time (requested wall time) and max_gpus_per_job; a user's or group's max_jobs (running +
// waiting) in force; and whether the job could ever start: run windows, drains and limits in
// force from now on for ever (no `until`; a rule whose `from` is still to come rejects nothing)
// that no wait can satisfy (a plan longer than every window's max_time, or than the longest gap
// between drain points; a max_running_jobs of 0; a max_gpus below the job's GPUs).
// Rules at each start (MayStart): every limit rule in force that applies to the job's user, group
// and (user, partition) stays within max_running_jobs and max_gpus with the job started; the
// run window of its partition containing now (the first listed) allows its plan; no drain point
// of its partition lies in (now, now + plan); no downtime of its partition overlaps [now, now +
// plan).
// NextChange(now) is the next time a time rule changes what may start (window bounds, midnight
// of a window's days, drain points, downtime ends, limit periods): the engine runs a pass then.
#ifndef CLUSTERSIM_SIM_ENGINE_SITE_RULES_H_
#define CLUSTERSIM_SIM_ENGINE_SITE_RULES_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sim/engine/job.h"
#include "sim/hardware/cluster.h"

namespace clustersim {

class SiteRules {
 public:
  // Throws InputError when the site uses dates or weekly calendars and the trace does not know
  // its Unix origin. `seed` draws the scheduler latencies (SiteSpec::scheduler_latency_seconds).
  SiteRules(const SiteSpec& site, const Cluster& cluster, const Trace& trace, uint64_t seed = 0);

  const SiteSpec& spec() const { return site_; }
  // The job's own partition (an index into spec().partitions), or -1 when the site has none.
  int partition_of(JobId id) const { return jobs_[id].partition; }
  // The GPU types the job's partitions allow (Cluster::PartitionTypes); all when none.
  uint64_t type_mask(JobId id) const { return masks_[jobs_[id].mask]; }
  // GPUs the job requests on the cluster: ceil(processors / its partition's processors_per_gpu).
  int RequestGpus(JobId id) const;
  // The job's plan in seconds (see the header comment), given its requested wall time (< 0: none).
  double Plan(JobId id, double requested_walltime) const;

  // At arrival: "" if the job is admitted (and counted), else why it is rejected.
  std::string Admit(JobId id, double now, double requested_walltime);
  // Whether the job may start now with `gpus` GPUs and this plan; WhyBlocked says why not ("" if
  // it may).
  bool MayStart(JobId id, double now, double plan, int gpus) const;
  std::string WhyBlocked(JobId id, double now, double plan, int gpus) const;
  void OnStart(JobId id, int gpus);
  void OnStop(JobId id, int gpus);
  // The job left the system (ended, or rejected after it was admitted).
  void OnDone(JobId id);

  // True if some rule limits when jobs start (policies must ask MayStart).
  bool has_start_rules() const { return has_start_rules_; }
  // True if what may start changes with time alone (windows, drains, downtime, limit periods).
  bool has_time_rules() const { return has_time_rules_; }
  // The next time after `now` at which a time rule changes; +inf if none.
  double NextChange(double now) const;
  bool kill_at_walltime() const { return site_.kill_at_walltime; }
  double scheduler_cycle_seconds() const { return site_.scheduler_cycle_seconds; }
  bool schedule_on_end() const { return site_.schedule_on_end; }
  bool schedule_on_submit() const { return site_.schedule_on_submit; }
  double over_time_limit_seconds() const { return site_.over_time_limit_seconds; }
  // What the run should be told: jobs of partitions the site does not model, each with its count.
  const std::vector<std::string>& warnings() const { return warnings_; }
  // Jobs whose partition is each of spec().partitions (for reports).
  const std::vector<int64_t>& jobs_per_partition() const { return jobs_per_partition_; }

 private:
  struct Period {
    double from = -std::numeric_limits<double>::infinity();
    double until = std::numeric_limits<double>::infinity();
    bool Contains(double t) const { return t >= from && t < until; }
  };
  struct Rule {
    SiteLimits limits;
    std::vector<int> who;  // user or group indices, ascending; empty = everyone
    Period period;
    int partition = -1;  // -1: site-wide
    bool by_group = false;
  };
  struct Window {
    RunWindow spec;
    Period period;
  };
  struct Drain {
    DrainRule spec;
    Period period;
  };
  struct PartitionRules {
    std::vector<Window> windows;
    std::vector<Drain> drains;
    double forever_max_plan = std::numeric_limits<double>::infinity();  // see Admit
    // The time from which every window and drain behind forever_max_plan is in force.
    double forever_from = -std::numeric_limits<double>::infinity();
  };
  struct Down {
    Period period;  // [start, end)
    uint64_t partitions = ~uint64_t{0};
  };
  struct Counts {
    int running = 0;
    int gpus = 0;
    int jobs = 0;  // running + waiting
  };
  struct JobSite {
    int32_t partition = -1;
    int32_t mask = 0;  // index into masks_
    int32_t user = -1;
    int32_t group = -1;
  };

  double ToTrace(const SiteTime& t) const;
  Period ToPeriod(const std::optional<SiteTime>& from, const std::optional<SiteTime>& until) const;
  double Local(double t) const { return t + local_shift_; }
  // The largest plan some time of the week allows under the windows and drains in force for
  // ever (+inf if some time has no window and no drain).
  double ForeverMaxPlan(const PartitionRules& rules) const;
  // The next drain point of `rules` after `t` (+inf if none).
  double NextDrain(const PartitionRules& rules, double t) const;
  // The max_time of the window of `rules` containing `t` (+inf if none).
  double WindowLimit(const PartitionRules& rules, double t) const;
  const Counts& CountsOf(const Rule& rule, const JobSite& job) const;
  Counts* MutableCounts(const Rule& rule, const JobSite& job);
  bool Applies(const Rule& rule, const JobSite& job) const;

  SiteSpec site_;
  std::vector<JobSite> jobs_;
  std::vector<uint64_t> masks_;
  std::vector<Rule> rules_;
  std::vector<PartitionRules> partitions_;
  std::vector<Down> downtimes_;
  std::vector<Counts> user_counts_, group_counts_;
  // Per partition with user limits: counts per user (empty otherwise).
  std::vector<std::vector<Counts>> partition_user_counts_;
  std::vector<uint8_t> admitted_;  // per job
  // With a scheduler latency: per job, the earliest start; and the future ones of admitted jobs
  // (a min-heap, for NextChange).
  std::vector<double> visible_at_;
  mutable std::vector<double> pending_visible_;
  std::vector<double> changes_;    // the absolute times of limit periods and downtime ends
  double local_shift_ = 0;         // unix_origin + utc_offset (0 if unknown and unused)
  double unix_origin_ = 0;
  bool has_start_rules_ = false;
  bool has_time_rules_ = false;
  std::vector<std::string> warnings_;
  std::vector<int64_t> jobs_per_partition_;
  const Trace& trace_;
};

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_ENGINE_SITE_RULES_H_
