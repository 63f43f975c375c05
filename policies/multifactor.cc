// multifactor: Slurm's multifactor priority with its two schedulers, the main one at every event
// and backfill every bf_interval seconds (https://slurm.schedmd.com/priority_multifactor.html,
// https://slurm.schedmd.com/sched_config.html; docs/policies.md#multifactor).
//
// Priority (recomputed every calc_period seconds, and for a job when it arrives):
//   P = weight_age x min(1, waited / max_age) + weight_size x size + weight_fairshare x F
//       + weight_partition x (its partition's priority_job_factor / the largest)
//       + weight_qos x (its queue's priority / the largest),
// size = GPUs / the cluster's GPUs (favor_small: 1 - that), F = 2^(-U/S) the classic fair-share
// factor of the job's user: U its GPU-seconds decayed with half-life half_life over everyone's,
// S its share (equal shares; policies/fair_share_ledger.h). Jobs are ordered by their partition's
// priority_tier (higher first), then P (higher first), then submission.
// Main scheduler (every pass): in that order, a job the site's rules hold back
// (SchedulingContext::MayStart) is passed over; a job that fits starts; once a job of a partition
// does not fit, no later job of that partition starts in the pass (Slurm's main scheduler).
// Backfill (a pass at least bf_interval seconds after the last, if anything changed since): the
// first bf_max_job_test jobs in order that may start are planned on the free GPUs of each GPU type
// over time (the running jobs ending at their requested wall time, the jobs reserved before in the
// cycle holding theirs): each gets the earliest start within bf_window seconds at which its GPUs
// of one allowed type stay free for its plan; it starts if that is now and the run's placement
// finds room, else that slot is reserved for it (its first is its promise, the `reserved_start`
// column), and a job with no slot in the window is skipped. As Slurm's, a lower-priority job thus
// starts only where it delays no job tested before it.
// Counting GPUs per type is exact with `pool` (and with partitions of one-GPU nodes holding whole
// nodes, processors_per_gpu in docs/cluster.md#site-model); with node-aware placements a counted
// slot may not place, and the job is then tried again at the next cycle.
//
// Parameters (default: the cluster's site "priority" and "backfill" objects, else Slurm's):
// weight_age, weight_size, weight_fairshare, weight_partition, weight_qos (0), max_age (604800 s),
// favor_small (false), half_life (604800 s), calc_period (300 s), bf_max_job_test (500),
// bf_window (86400 s), bf_interval (30 s; 0 = every pass), walltime (trace) as for easy.
// Cost of a backfill cycle: O(running jobs + tested jobs x (log P + reservations it overlaps))
// for P running jobs per type; of a main pass O(waiting jobs).
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "policies/backfill.h"
#include "policies/fair_share_ledger.h"
#include "policies/registry.h"
#include "sim/engine/site_rules.h"
#include "sim/util/error.h"

namespace clustersim {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// A parameter that may be left to the site: NaN until resolved.
double Optional(const Params& params, const std::string& key) {
  return params.Double(key, std::numeric_limits<double>::quiet_NaN());
}

class Multifactor final : public Policy {
 public:
  explicit Multifactor(const Params& params)
      : walltime_(WalltimeRule::FromParams(params)),
        ledger_options_(FairShareLedger::ParseOptions(params)),
        ledger_(ledger_options_),
        half_life_given_(params.values().count("half_life") > 0) {
    weight_age_ = Optional(params, "weight_age");
    weight_size_ = Optional(params, "weight_size");
    weight_fairshare_ = Optional(params, "weight_fairshare");
    weight_partition_ = Optional(params, "weight_partition");
    weight_qos_ = Optional(params, "weight_qos");
    max_age_ = Optional(params, "max_age");
    calc_period_ = params.Double("calc_period", 300);
    bf_max_job_test_ = Optional(params, "bf_max_job_test");
    bf_window_ = Optional(params, "bf_window");
    bf_interval_ = Optional(params, "bf_interval");
    if (params.values().count("favor_small")) favor_small_ = params.Bool("favor_small", false);
    favor_small_given_ = params.values().count("favor_small") > 0;
    for (const auto& [key, value] :
         {std::pair{"weight_age", weight_age_}, std::pair{"weight_size", weight_size_},
          std::pair{"weight_fairshare", weight_fairshare_},
          std::pair{"weight_partition", weight_partition_}, std::pair{"weight_qos", weight_qos_},
          std::pair{"bf_interval", bf_interval_}}) {
      if (value < 0) throw InputError(std::string("parameter ") + key + ": expected a number >= 0");
    }
    for (const auto& [key, value] :
         {std::pair{"max_age", max_age_}, std::pair{"bf_window", bf_window_},
          std::pair{"bf_max_job_test", bf_max_job_test_}, std::pair{"calc_period", calc_period_}}) {
      if (!(value > 0) && !std::isnan(value)) {
        throw InputError(std::string("parameter ") + key + ": expected a number > 0");
      }
    }
  }

  bool HonoursSiteRules() const override { return true; }
  double RequestedWalltime(const Job& job) const override { return walltime_.Requested(job); }
  // Jobs without a wall time are planned with modelled user estimates, as easy plans them
  // (docs/backfilling.md#user-estimates).
  void BeforeRun(const Trace& trace, uint64_t seed) override { walltime_.Prepare(trace, seed); }
  std::string PlanningEstimates() const override { return walltime_.Describe(); }

  void OnArrival(SchedulingContext& context, JobId id) override {
    Resolve(context);
    waiting_.push_back(id);
    priority_.resize(std::max(priority_.size(), static_cast<size_t>(id) + 1), 0.0);
    priority_[id] = Priority(context, id);
    dirty_ = true;
  }
  void OnCompletion(SchedulingContext& context, JobId id) override {
    Stopped(context, id);
    dirty_ = true;
  }
  void OnRequeue(SchedulingContext& context, JobId id) override {
    Stopped(context, id);
    waiting_.push_back(id);
    dirty_ = true;
  }

  void Schedule(SchedulingContext& context) override {
    Resolve(context);
    const double now = context.now();
    if (now >= next_calc_) {
      Recalculate(context);
      next_calc_ = now + calc_period_;
    }
    SortWaiting(context);
    MainPass(context);
    if (dirty_ && !waiting_.empty()) {
      if (now >= last_backfill_ + bf_interval_) {
        Backfill(context);
        last_backfill_ = now;
        dirty_ = false;
      } else if (timer_ <= now) {
        timer_ = last_backfill_ + bf_interval_;
        context.SetTimer(timer_, kNoJob, 0);
      }
    }
  }

  std::string IdleWarning(const Trace& trace, const ModelRuntime* /*models*/) const override {
    if (!(weight_fairshare_ > 0)) return "";
    std::optional<Symbol> first;
    for (const Job& job : trace.jobs) {
      if (!first) first = job.user;
      if (job.user != *first) return "";
    }
    return "multifactor: weight_fairshare has nothing to act on: the trace names at most one "
           "user (every job gets the same fair-share factor)";
  }

 private:
  struct Running {
    int type = -1;
    int gpus = 0;
  };

  // Reads the site's priority and backfill settings for what the parameters left open.
  void Resolve(const SchedulingContext& context) {
    if (resolved_) return;
    resolved_ = true;
    const SiteSpec& site = context.cluster().spec().site;
    const MultifactorWeights& w = site.priority;
    auto pick = [](double* value, double site_value) {
      if (std::isnan(*value)) *value = site_value;
    };
    pick(&weight_age_, w.age);
    pick(&weight_size_, w.job_size);
    pick(&weight_fairshare_, w.fairshare);
    pick(&weight_partition_, w.partition);
    pick(&weight_qos_, w.qos);
    pick(&max_age_, w.max_age_seconds);
    if (!favor_small_given_) favor_small_ = w.favor_small;
    if (!half_life_given_ && site.has_priority) {
      // The site's half-life; the accounts and shares stay the parameters'.
      ledger_options_.half_life_seconds = w.half_life_seconds;
      ledger_ = FairShareLedger(ledger_options_);
    }
    pick(&bf_max_job_test_, site.backfill.max_job_test);
    pick(&bf_window_, site.backfill.window_seconds);
    pick(&bf_interval_, site.backfill.interval_seconds);
    for (const SitePartition& p : site.partitions) {
      max_partition_factor_ = std::max(max_partition_factor_, p.priority_job_factor);
    }
    for (const auto& [name, value] : w.qos_priority) max_qos_ = std::max(max_qos_, value);
    const Cluster& cluster = context.cluster();
    free_.assign(cluster.catalog().gpus().size(), {});
  }

  const SitePartition* PartitionOf(const SchedulingContext& context, JobId id) const {
    const SiteRules* site = context.site();
    if (site == nullptr || site->partition_of(id) < 0) return nullptr;
    return &site->spec().partitions[site->partition_of(id)];
  }

  double Priority(SchedulingContext& context, JobId id) {
    const Job& job = context.job(id);
    const double now = context.now();
    double p = 0;
    if (weight_age_ > 0) p += weight_age_ * std::min(1.0, (now - job.submit_time) / max_age_);
    if (weight_size_ > 0) {
      const double share =
          static_cast<double>(context.active(id).request.gpus) / context.cluster().total_gpus();
      p += weight_size_ * (favor_small_ ? 1 - share : share);
    }
    if (weight_fairshare_ > 0) p += weight_fairshare_ * ledger_.factor(ledger_.AccountOf(job));
    if (weight_partition_ > 0 && max_partition_factor_ > 0) {
      if (const SitePartition* part = PartitionOf(context, id)) {
        p += weight_partition_ * part->priority_job_factor / max_partition_factor_;
      }
    }
    if (weight_qos_ > 0 && max_qos_ > 0 && !job.priority_class.empty()) {
      const auto& q = context.cluster().spec().site.priority.qos_priority;
      if (auto it = q.find(job.priority_class.str()); it != q.end()) {
        p += weight_qos_ * it->second / max_qos_;
      }
    }
    return p;
  }

  void Recalculate(SchedulingContext& context) {
    if (weight_fairshare_ > 0) {
      ledger_.Advance(context.now());
      ledger_.ComputeFactors();
    }
    for (JobId id : waiting_) priority_[id] = Priority(context, id);
  }

  int TierOf(const SchedulingContext& context, JobId id) const {
    const SitePartition* part = PartitionOf(context, id);
    return part ? part->priority_tier : 0;
  }

  void SortWaiting(const SchedulingContext& context) {
    std::stable_sort(waiting_.begin(), waiting_.end(), [&](JobId a, JobId b) {
      const int ta = TierOf(context, a), tb = TierOf(context, b);
      if (ta != tb) return ta > tb;
      if (priority_[a] != priority_[b]) return priority_[a] > priority_[b];
      return a < b;  // JobId order is submission order
    });
  }

  void Started(SchedulingContext& context, JobId id, int type) {
    const int gpus = context.active(id).request.gpus;
    const double end = context.now() + walltime_.Planned(context.job(id));
    by_end_.emplace(std::make_pair(end, id), Running{type, gpus});
    end_of_[id] = end;
    if (weight_fairshare_ > 0) {
      ledger_.Advance(context.now());
      ledger_.Charge(ledger_.AccountOf(context.job(id)), gpus);
    }
    dirty_ = true;
  }

  void Stopped(SchedulingContext& context, JobId id) {
    auto it = end_of_.find(id);
    if (it == end_of_.end()) return;
    auto running = by_end_.find(std::make_pair(it->second, id));
    if (weight_fairshare_ > 0) {
      ledger_.Advance(context.now());
      ledger_.Charge(ledger_.AccountOf(context.job(id)), -running->second.gpus);
    }
    by_end_.erase(running);
    end_of_.erase(it);
  }

  void StartJob(SchedulingContext& context, JobId id, Allocation allocation) {
    const int type = allocation.gpu_type;
    context.Start(id, std::move(allocation));
    Started(context, id, type);
  }

  void MainPass(SchedulingContext& context) {
    std::vector<uint64_t> blocked;  // type masks of partitions with a job left pending
    Allocation allocation;
    size_t kept = 0;
    for (size_t k = 0; k < waiting_.size(); ++k) {
      const JobId id = waiting_[k];
      const uint64_t mask = context.active(id).request.type_mask;
      const bool partition_blocked =
          std::find(blocked.begin(), blocked.end(), mask) != blocked.end();
      if (!partition_blocked && context.MayStart(id)) {
        if (context.TryPlace(id, &allocation)) {
          StartJob(context, id, std::move(allocation));
          continue;
        }
        blocked.push_back(mask);
      }
      waiting_[kept++] = id;
    }
    waiting_.resize(kept);
  }

  // The cycle's profile of one GPU type: steps (time, free GPUs from then on), ascending, the
  // last lasting for ever. Built from the free GPUs now and the running jobs' estimated ends;
  // each reservation takes its GPUs off the steps it covers.
  using Steps = std::vector<std::pair<double, int>>;

  // The earliest start in [now, limit] at which `gpus` GPUs stay free on `steps` for `plan`
  // seconds; +inf if none. One forward scan: a start candidate is dropped together with every
  // step before the first step in its window short of GPUs.
  static double EarliestSlot(const Steps& steps, int gpus, double plan, double limit) {
    size_t i = 0;
    while (i < steps.size()) {
      const double t = steps[i].first;
      if (t > limit) return kInf;
      if (steps[i].second < gpus) {
        ++i;
        continue;
      }
      size_t j = i + 1;
      while (j < steps.size() && steps[j].first < t + plan && steps[j].second >= gpus) ++j;
      if (j == steps.size() || steps[j].first >= t + plan) return t;
      i = j + 1;
    }
    return kInf;
  }

  // Takes `gpus` off [start, end) of `steps`.
  static void Reserve(Steps* steps, double start, double end, int gpus) {
    auto at = [&](double t) {  // index of the step starting at t, inserted if needed
      auto it = std::lower_bound(steps->begin(), steps->end(), t,
                                 [](const std::pair<double, int>& s, double v) { return s.first < v; });
      if (it != steps->end() && it->first == t) return static_cast<size_t>(it - steps->begin());
      const int free = std::prev(it)->second;  // t > the first step's time
      const size_t index = static_cast<size_t>(it - steps->begin());
      steps->insert(it, {t, free});  // may move the steps: index, not iterator
      return index;
    };
    const size_t a = at(start);
    const size_t b = std::isfinite(end) ? at(end) : steps->size();
    for (size_t k = a; k < b; ++k) (*steps)[k].second -= gpus;
  }

  void BuildProfile(const SchedulingContext& context) {
    const double now = context.now();
    for (int type : context.cluster().gpu_types()) {
      free_[type].clear();
      free_[type].emplace_back(now, context.resources().free_of_type(type));
    }
    for (const auto& [key, r] : by_end_) {
      // A job past its estimate (kills off) is taken to end right now.
      const double end = std::max(key.first, now);
      Steps& steps = free_[r.type];
      const int free = steps.back().second + r.gpus;
      if (steps.back().first == end) {
        steps.back().second = free;
      } else {
        steps.emplace_back(end, free);
      }
    }
  }

  void Backfill(SchedulingContext& context) {
    const Cluster& cluster = context.cluster();
    int free_now = 0;
    for (int type : cluster.gpu_types()) free_now += context.resources().free_of_type(type);
    // Nothing can start (reservations would change nothing now), but under host limits a CPU-only
    // job, which needs no GPU (docs/resources.md#cpu-only-jobs).
    const bool cpu_only_may_start = context.resources().host_limited();
    if (free_now == 0 && !cpu_only_may_start) return;
    BuildProfile(context);
    const double now = context.now();
    const double limit = now + bf_window_;
    int tested = 0;
    Allocation allocation;
    size_t kept = 0;
    for (size_t k = 0; k < waiting_.size(); ++k) {
      const JobId id = waiting_[k];
      const PlacementRequest& request = context.active(id).request;
      if (tested >= bf_max_job_test_ || (free_now == 0 && !IsCpuOnly(request)) ||
          !context.MayStart(id)) {
        waiting_[kept++] = id;
        continue;
      }
      ++tested;
      const double plan = walltime_.Planned(context.job(id));
      double best = kInf;
      int best_type = -1;
      for (int type : cluster.gpu_types()) {
        if (!request.AllowsType(type)) continue;
        const double t = EarliestSlot(free_[type], request.gpus, plan, std::min(limit, best));
        if (t < best) {
          best = t;
          best_type = type;
        }
      }
      if (best_type < 0) {
        waiting_[kept++] = id;
        continue;
      }
      if (best <= now) {
        if (context.placement().Find(context.resources(), OnType(request, best_type),
                                     &allocation)) {
          Reserve(&free_[best_type], now, now + plan, request.gpus);
          free_now -= request.gpus;
          StartJob(context, id, std::move(allocation));
          continue;
        }
      } else {
        context.Promise(id, best);
      }
      Reserve(&free_[best_type], best, best + plan, request.gpus);
      waiting_[kept++] = id;
    }
    waiting_.resize(kept);
  }

  WalltimeRule walltime_;
  FairShareLedger::Options ledger_options_;
  FairShareLedger ledger_;
  bool half_life_given_;
  double weight_age_, weight_size_, weight_fairshare_, weight_partition_, weight_qos_;
  double max_age_, calc_period_, bf_max_job_test_, bf_window_, bf_interval_;
  bool favor_small_ = false;
  bool favor_small_given_ = false;
  bool resolved_ = false;
  double max_partition_factor_ = 0;
  double max_qos_ = 0;

  std::vector<JobId> waiting_;     // in priority order after SortWaiting
  std::vector<double> priority_;   // by JobId
  // Running jobs this policy started, by (estimated end, id), and each one's key.
  std::map<std::pair<double, JobId>, Running> by_end_;
  std::map<JobId, double> end_of_;
  double next_calc_ = -kInf;
  double last_backfill_ = -kInf;
  double timer_ = -kInf;
  bool dirty_ = false;
  std::vector<Steps> free_;  // the backfill cycle's profile, per catalog GPU type
};

}  // namespace
}  // namespace clustersim

CLUSTERSIM_REGISTER_POLICY(
    multifactor, "multifactor",
    "Slurm's multifactor priority (age, size, fair-share with decay, partition, QOS) with its main "
    "and backfill schedulers and their limits",
    "weight_age, weight_size, weight_fairshare, weight_partition, weight_qos (0, or the cluster "
    "site's priority weights)\n"
    "                           max_age (604800 s), favor_small (false), half_life (604800 s), "
    "calc_period (300 s)\n"
    "                           bf_max_job_test (500), bf_window (86400 s), bf_interval (30 s; 0 = "
    "every pass), or the site's backfill limits\n"
    "                           walltime (trace): trace | exact | a factor f > 0, as for easy",
    [](const clustersim::Params& params) {
      return std::make_unique<clustersim::Multifactor>(params);
    });
