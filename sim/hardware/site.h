// A site model (docs/cluster.md#site-model): what a real cluster's scheduler configuration adds
// to its hardware, as Slurm's slurm.conf and association/QOS limits state it: partitions (node
// sets with their own limits and priority), per-user and per-group limits, time-of-day run
// windows and drain points, downtime windows, the wall-time kill with its grace, and the weights
// of the multifactor priority with the backfill limits. It is the optional "site" object of a
// cluster spec, parsed with it (ClusterSpec::site) and immutable; sim/engine/site_rules.h
// resolves it against a trace and the engine enforces it.
//
// Times are either seconds of the trace's clock or dates ("1997-06-06", "2012-03-01T07:28"),
// read on the site's local clock (UTC + clock.utc_offset_hours) and turned into trace seconds
// with the trace's Unix origin (Trace::unix_origin). Weekly calendars (run windows, drains) are
// read on the same local clock.
#ifndef CLUSTERSIM_SIM_HARDWARE_SITE_H_
#define CLUSTERSIM_SIM_HARDWARE_SITE_H_

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace clustersim {

inline constexpr double kNoTimeLimit = std::numeric_limits<double>::infinity();

// A time as the spec gives it: trace seconds, or a date (seconds since 1970-01-01 00:00 on the
// site's local clock) that needs the trace's Unix origin.
struct SiteTime {
  double seconds = 0;
  bool is_date = false;
};

// Days of the week: bit 0 = Monday ... bit 6 = Sunday.
using DayMask = uint8_t;
inline constexpr DayMask kEveryDay = 0x7f;

// Limits of one user (or group) at once; -1 = none. Slurm: MaxJobs / MaxJobsPerUser,
// MaxTRESPerUser=gres/gpu (cpu on a CPU log read at one processor per GPU), MaxSubmitJobs.
struct SiteLimits {
  int max_running_jobs = -1;
  int max_gpus = -1;  // GPUs held by running jobs (the cluster's GPUs, after processors_per_gpu)
  int max_jobs = -1;  // running + waiting; a job submitted over it is rejected
};

// Limits for each user (group) named in `names`, or for every one when `names` is empty, in
// force during [from, until).
struct LimitRule {
  SiteLimits limits;
  std::vector<std::string> names;
  std::optional<SiteTime> from, until;
};

// A weekly period on the local clock: days, and minutes of the day [start, end) (end <= start:
// the period runs past midnight into the next day). A job may start in it only if its plan (its
// requested wall time) is at most max_time_seconds.
struct RunWindow {
  DayMask days = kEveryDay;
  int start_minute = 0;
  int end_minute = 0;  // 0 with start 0: the whole day
  double max_time_seconds = kNoTimeLimit;
  std::optional<SiteTime> from, until;
};

// Drain points: no job may run across these instants (a job starts only if its plan ends by
// the next one), as KTH's SP2 synchronized its nodes at 07:00 and 16:00 on weekdays.
struct DrainRule {
  DayMask days = kEveryDay;
  std::vector<int> minutes;  // minutes of the day, ascending
  std::optional<SiteTime> from, until;
};

struct SitePartition {
  std::string name;
  // The partition names or numbers jobs carry (Job::partition) that mean this partition;
  // default: its name.
  std::vector<std::string> names;
  // Jobs of these queues (Job::priority_class: SWF field 15) run here whatever their partition.
  std::vector<std::string> queues;
  std::vector<int> node_groups;  // indices into ClusterSpec::groups; every group by default
  double max_time_seconds = kNoTimeLimit;  // MaxTime: a longer request is rejected at submission
  double default_time_seconds = -1;        // DefaultTime: the plan of a job without a wall time
  int max_gpus_per_job = -1;               // a larger job is rejected at submission
  // Processors of the log per GPU of this partition's nodes: a job of p processors holds
  // ceil(p / processors_per_gpu) GPUs, i.e. whole nodes of that many processors when nodes have
  // one GPU each (Slurm's Exclusive=node partitions). 1 = a processor is a GPU.
  int processors_per_gpu = 1;
  int priority_tier = 0;             // PriorityTier: higher tiers are scheduled first
  double priority_job_factor = 1;    // PriorityJobFactor (multifactor's partition factor)
  std::vector<LimitRule> user_limits;  // per user within this partition
  std::vector<RunWindow> run_windows;  // the first window containing the time applies
  std::vector<DrainRule> drains;
};

// The partitions (all when empty) are out of service during [start, end): no job starts in it,
// nor before it if its plan would reach into it.
struct Downtime {
  SiteTime start, end;
  std::vector<int> partitions;  // indices into SiteSpec::partitions
};

// Slurm's multifactor priority (https://slurm.schedmd.com/priority_multifactor.html): weights
// (PriorityWeight*), PriorityMaxAge, PriorityFavorSmall, PriorityDecayHalfLife, and the QOS
// priorities, here the priority of each queue (Job::priority_class). Defaults: Slurm's.
struct MultifactorWeights {
  double age = 0, job_size = 0, fairshare = 0, partition = 0, qos = 0;
  double max_age_seconds = 7 * 86400;
  bool favor_small = false;
  double half_life_seconds = 7 * 86400;
  std::map<std::string, double> qos_priority;  // queue name -> priority (>= 0)
};

// sched/backfill's limits (https://slurm.schedmd.com/sched_config.html): jobs tested per cycle,
// how far ahead it plans, seconds between cycles. Defaults: Slurm's (500, 1 day, 30 s).
struct BackfillLimits {
  int max_job_test = 500;
  double window_seconds = 86400;
  double interval_seconds = 30;
};

struct SiteSpec {
  bool present = false;  // the cluster spec has a "site" object
  std::vector<SitePartition> partitions;
  int default_partition = 0;  // where jobs of no modelled partition run (when there are any)
  std::vector<LimitRule> user_limits, group_limits;
  std::vector<Downtime> downtimes;
  MultifactorWeights priority;
  BackfillLimits backfill;
  bool has_priority = false, has_backfill = false;  // the spec gives them
  double utc_offset_seconds = 0;                    // the local clock = UTC + this
  bool kill_at_walltime = true;       // jobs are killed at their requested wall time ...
  double over_time_limit_seconds = 0;  // ... plus this grace (Slurm's OverTimeLimit)
  // When the scheduler decides. cycle 0 (the default): at every event. cycle > 0: at the
  // multiples of `cycle` seconds of the trace's clock (a polling scheduler: Maui's
  // RMPOLLINTERVAL, Slurm's sched_interval), and also at job ends (on_end) and submissions
  // (on_submit) if said; a job submitted between such passes waits for the next.
  double scheduler_cycle_seconds = 0;
  bool schedule_on_end = false;
  bool schedule_on_submit = false;
  // > 0: the mean of the scheduler's latency: a job may start no earlier than its submission plus
  // an exponentially distributed delay of this mean, drawn per job from the run's seed. It stands
  // for what a log's short waits show and it does not record (a job's way through the resource
  // manager, polling); a fitted figure, not a configuration setting. 0 = none.
  double scheduler_latency_seconds = 0;

  // True if some rule limits when a job may start (limits, run windows, drains, downtime): the
  // policy must then ask SchedulingContext::MayStart (Policy::HonoursSiteRules).
  bool HasStartRules() const;
  // True if some time of the spec is a date (the trace must know its Unix origin).
  bool UsesDates() const;
};

// Parses the "site" object of a cluster spec. `group_names` are the node groups' names (empty
// for unnamed groups), which partitions may name. Throws JsonValueError naming the value
// ("site.partitions[1].max_time: ...").
SiteSpec ParseSite(const nlohmann::json& site, const std::string& origin,
                   const std::vector<std::string>& group_names);

// Local-clock helpers: seconds since 1970-01-01 00:00 of a date "YYYY-MM-DD[THH:MM[:SS]]" (or
// a blank instead of 'T'); false if it is not one.
bool ParseSiteDate(const std::string& text, double* seconds);
// The day of the week (0 = Monday) and the minute of the day of local time `seconds`.
int WeekdayOf(double local_seconds);
double MinuteOfDay(double local_seconds);

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_HARDWARE_SITE_H_
