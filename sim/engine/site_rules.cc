#include "sim/engine/site_rules.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include "sim/engine/faults.h"
#include "sim/util/error.h"

namespace clustersim {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kDay = 86400;

std::vector<std::string> SplitCommas(const std::string& text) {
  std::vector<std::string> parts;
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t end = text.find(',', begin);
    if (end == std::string::npos) end = text.size();
    if (end > begin) parts.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return parts;
}

bool OnDay(DayMask days, int weekday) { return (days >> weekday) & 1; }

// Whether the weekly window contains local time `local`.
bool WindowContains(const RunWindow& w, double local) {
  const int day = WeekdayOf(local);
  const double minute = MinuteOfDay(local);
  if (w.start_minute == w.end_minute) return OnDay(w.days, day);  // the whole day
  if (w.start_minute < w.end_minute) {
    return OnDay(w.days, day) && minute >= w.start_minute && minute < w.end_minute;
  }
  // Past midnight: from start on its day, until end on the next.
  return (OnDay(w.days, day) && minute >= w.start_minute) ||
         (OnDay(w.days, (day + 6) % 7) && minute < w.end_minute);
}

std::string Hours(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%g h", std::round(seconds / 36.0) / 100.0);
  return text;
}

}  // namespace

SiteRules::SiteRules(const SiteSpec& site, const Cluster& cluster, const Trace& trace,
                     uint64_t seed)
    : site_(site), trace_(trace) {
  if (site_.UsesDates()) {
    if (std::isnan(trace.unix_origin)) {
      throw InputError(cluster.spec().origin, 0, 0,
                       "the site model gives dates or weekly run windows and drains, but the "
                       "trace " +
                           trace.path +
                           " does not say when its time 0 is (an SWF header's UnixStartTime, or "
                           "a format of dates): give times in seconds of the trace instead");
    }
    unix_origin_ = trace.unix_origin;
    local_shift_ = trace.unix_origin + site_.utc_offset_seconds;
  }
  const size_t n = trace.jobs.size();
  jobs_.resize(n);
  admitted_.assign(n, 0);
  // Users and groups, numbered in order of first appearance.
  std::unordered_map<uint32_t, int> users, groups;
  for (size_t i = 0; i < n; ++i) {
    const Job& job = trace.jobs[i];
    if (!job.user.empty()) {
      jobs_[i].user = users.try_emplace(job.user.id(), static_cast<int>(users.size())).first->second;
    }
    if (!job.vc.empty()) {
      jobs_[i].group =
          groups.try_emplace(job.vc.id(), static_cast<int>(groups.size())).first->second;
    }
  }
  user_counts_.resize(users.size());
  group_counts_.resize(groups.size());

  // Partitions.
  const std::vector<SitePartition>& parts = site_.partitions;
  jobs_per_partition_.assign(parts.size(), 0);
  masks_.push_back(~uint64_t{0});
  if (!parts.empty()) {
    std::map<std::string, int> by_name, by_queue;
    for (size_t p = 0; p < parts.size(); ++p) {
      for (const std::string& name : parts[p].names) by_name.emplace(name, static_cast<int>(p));
      for (const std::string& q : parts[p].queues) by_queue.emplace(q, static_cast<int>(p));
    }
    std::map<std::pair<uint32_t, uint32_t>, std::pair<int, int>> resolved;  // -> (partition, mask)
    std::map<uint64_t, int> mask_index;
    mask_index[masks_[0]] = 0;
    std::map<std::string, int64_t> unmodelled;
    for (size_t i = 0; i < n; ++i) {
      const Job& job = trace.jobs[i];
      auto [it, added] =
          resolved.try_emplace({job.priority_class.id(), job.partition.id()}, std::pair{-1, 0});
      if (added) {
        int own = -1;
        uint64_t mask = 0;
        if (auto q = by_queue.find(job.priority_class.str()); q != by_queue.end()) {
          own = q->second;
          mask = cluster.PartitionTypes(own);
        } else {
          for (const std::string& name : SplitCommas(job.partition.str())) {
            auto p = by_name.find(name);
            if (p == by_name.end()) continue;
            if (own < 0) own = p->second;
            mask |= cluster.PartitionTypes(p->second);
          }
        }
        if (own < 0) {
          own = site_.default_partition;
          mask = cluster.PartitionTypes(own);
        }
        auto [m, fresh] = mask_index.try_emplace(mask, static_cast<int>(masks_.size()));
        if (fresh) masks_.push_back(mask);
        it->second = {own, m->second};
      }
      jobs_[i].partition = it->second.first;
      jobs_[i].mask = it->second.second;
      ++jobs_per_partition_[jobs_[i].partition];
      if (!job.partition.empty() && by_queue.find(job.priority_class.str()) == by_queue.end()) {
        bool known = false;
        for (const std::string& name : SplitCommas(job.partition.str())) {
          known = known || by_name.count(name);
        }
        if (!known) ++unmodelled[job.partition.str()];
      }
    }
    if (!unmodelled.empty()) {
      int64_t total = 0;
      std::vector<std::pair<int64_t, std::string>> listed;
      for (const auto& [name, count] : unmodelled) {
        total += count;
        listed.emplace_back(-count, name);
      }
      std::sort(listed.begin(), listed.end());
      std::string names;
      for (size_t k = 0; k < listed.size() && k < 8; ++k) {
        names += (k ? ", " : "") + listed[k].second + ": " + std::to_string(-listed[k].first);
      }
      if (listed.size() > 8) names += ", ...";
      warnings_.push_back(std::to_string(total) + " jobs name partitions the site does not model (" +
                          names + "); they run in its default partition " +
                          parts[site_.default_partition].name +
                          " (add partitions, or names to a partition, in the cluster spec's site)");
    }
  }

  // Limit rules.
  auto resolve_names = [](const std::vector<std::string>& names,
                          const std::unordered_map<uint32_t, int>& index) {
    std::vector<int> who;
    for (const std::string& name : names) {
      auto it = index.find(Symbol(name).id());
      who.push_back(it == index.end() ? -2 : it->second);  // -2: nobody in this trace
    }
    std::sort(who.begin(), who.end());
    return who;
  };
  auto add_rules = [&](const std::vector<LimitRule>& rules, int partition, bool by_group) {
    for (const LimitRule& r : rules) {
      Rule rule;
      rule.limits = r.limits;
      rule.who = resolve_names(r.names, by_group ? groups : users);
      rule.period = ToPeriod(r.from, r.until);
      rule.partition = partition;
      rule.by_group = by_group;
      rules_.push_back(std::move(rule));
    }
  };
  add_rules(site_.user_limits, -1, false);
  add_rules(site_.group_limits, -1, true);
  partitions_.resize(parts.size());
  partition_user_counts_.resize(parts.size());
  for (size_t p = 0; p < parts.size(); ++p) {
    add_rules(parts[p].user_limits, static_cast<int>(p), false);
    if (!parts[p].user_limits.empty()) partition_user_counts_[p].resize(users.size());
    for (const RunWindow& w : parts[p].run_windows) {
      partitions_[p].windows.push_back({w, ToPeriod(w.from, w.until)});
    }
    for (const DrainRule& d : parts[p].drains) {
      partitions_[p].drains.push_back({d, ToPeriod(d.from, d.until)});
    }
    partitions_[p].forever_max_plan = ForeverMaxPlan(partitions_[p]);
    // From when every window and drain in force for ever (those ForeverMaxPlan reads) is.
    auto latest_from = [&](const auto& rules) {
      for (const auto& rule : rules) {
        if (std::isfinite(rule.period.until)) continue;
        partitions_[p].forever_from = std::max(partitions_[p].forever_from, rule.period.from);
      }
    };
    latest_from(partitions_[p].windows);
    latest_from(partitions_[p].drains);
  }
  for (const Downtime& d : site_.downtimes) {
    Down down;
    down.period = {ToTrace(d.start), ToTrace(d.end)};
    if (!d.partitions.empty()) {
      down.partitions = 0;
      for (int p : d.partitions) down.partitions |= uint64_t{1} << p;
    }
    downtimes_.push_back(down);
    changes_.push_back(down.period.until);
  }
  auto add_period = [&](const Period& period) {
    if (std::isfinite(period.from)) changes_.push_back(period.from);
    if (std::isfinite(period.until)) changes_.push_back(period.until);
  };
  for (const Rule& rule : rules_) add_period(rule.period);
  for (const PartitionRules& p : partitions_) {
    for (const Window& w : p.windows) add_period(w.period);
    for (const Drain& d : p.drains) add_period(d.period);
  }
  std::sort(changes_.begin(), changes_.end());
  changes_.erase(std::unique(changes_.begin(), changes_.end()), changes_.end());

  if (site_.scheduler_latency_seconds > 0) {
    // One draw per job in job order: the same latencies whatever the policy.
    ExponentialSource draws(seed ^ 0x5C4EDu);
    visible_at_.resize(n);
    for (size_t i = 0; i < n; ++i) {
      visible_at_[i] = trace.jobs[i].submit_time + draws.Next(site_.scheduler_latency_seconds);
    }
  }
  has_start_rules_ = site_.HasStartRules();
  has_time_rules_ = !changes_.empty() || !visible_at_.empty();
  for (const PartitionRules& p : partitions_) {
    has_time_rules_ = has_time_rules_ || !p.windows.empty() || !p.drains.empty();
  }
}

double SiteRules::ToTrace(const SiteTime& t) const {
  return t.is_date ? t.seconds - site_.utc_offset_seconds - unix_origin_ : t.seconds;
}

SiteRules::Period SiteRules::ToPeriod(const std::optional<SiteTime>& from,
                                      const std::optional<SiteTime>& until) const {
  Period period;
  if (from) period.from = ToTrace(*from);
  if (until) period.until = ToTrace(*until);
  return period;
}

int SiteRules::RequestGpus(JobId id) const {
  const int gpus = trace_.jobs[id].gpus;
  const int p = jobs_[id].partition;
  if (p < 0) return gpus;
  const int per = site_.partitions[p].processors_per_gpu;
  return per <= 1 ? gpus : (gpus + per - 1) / per;
}

double SiteRules::Plan(JobId id, double requested_walltime) const {
  if (requested_walltime >= 0) return requested_walltime;
  const int p = jobs_[id].partition;
  if (p >= 0) {
    const SitePartition& part = site_.partitions[p];
    if (part.default_time_seconds > 0) return part.default_time_seconds;
    if (std::isfinite(part.max_time_seconds)) return part.max_time_seconds;
  }
  return trace_.jobs[id].duration;
}

double SiteRules::WindowLimit(const PartitionRules& rules, double t) const {
  const double local = Local(t);
  for (const Window& w : rules.windows) {
    if (w.period.Contains(t) && WindowContains(w.spec, local)) return w.spec.max_time_seconds;
  }
  return kInf;
}

double SiteRules::NextDrain(const PartitionRules& rules, double t) const {
  double best = kInf;
  for (const Drain& d : rules.drains) {
    if (t >= d.period.until) continue;
    // From the later of t and the rule's start (an instant at `from` itself counts).
    const double from = std::max(t, std::nextafter(d.period.from, -kInf));
    const double local = Local(from);
    const double day0 = std::floor(local / kDay) * kDay;
    for (int k = 0; k <= 7; ++k) {
      const double day = day0 + k * kDay;
      if (!OnDay(d.spec.days, WeekdayOf(day))) continue;
      bool found = false;
      for (int minute : d.spec.minutes) {
        const double instant = day + minute * 60.0 - local_shift_;  // trace seconds
        if (instant > from && instant > t) {
          if (instant < d.period.until) best = std::min(best, instant);
          found = true;
          break;
        }
      }
      if (found) break;
    }
  }
  return best;
}

double SiteRules::ForeverMaxPlan(const PartitionRules& rules) const {
  std::vector<RunWindow> windows;
  std::vector<DrainRule> drains;
  for (const Window& w : rules.windows) {
    if (!std::isfinite(w.period.until)) windows.push_back(w.spec);
  }
  for (const Drain& d : rules.drains) {
    if (!std::isfinite(d.period.until)) drains.push_back(d.spec);
  }
  if (windows.empty() && drains.empty()) return kInf;
  // Every minute of a week of the local clock, from a Monday (2001-01-01).
  const double monday = 11323 * kDay;
  double best = 0;
  for (int k = 0; k < 7 * 1440; ++k) {
    const double local = monday + k * 60.0;
    double limit = kInf;
    for (const RunWindow& w : windows) {
      if (WindowContains(w, local)) {
        limit = w.max_time_seconds;
        break;
      }
    }
    for (const DrainRule& d : drains) {
      // The next instant of this rule after `local`, within 8 days.
      const double day0 = std::floor(local / kDay) * kDay;
      for (int j = 0; j <= 8; ++j) {
        const double day = day0 + j * kDay;
        if (!OnDay(d.days, WeekdayOf(day))) continue;
        double next = kInf;
        for (int minute : d.minutes) {
          if (day + minute * 60.0 > local) {
            next = day + minute * 60.0;
            break;
          }
        }
        if (std::isfinite(next)) {
          limit = std::min(limit, next - local);
          break;
        }
      }
    }
    best = std::max(best, limit);
    if (std::isinf(best)) break;
  }
  return best;
}

bool SiteRules::Applies(const Rule& rule, const JobSite& job) const {
  if (rule.partition >= 0 && rule.partition != job.partition) return false;
  const int who = rule.by_group ? job.group : job.user;
  if (who < 0) return false;  // no user (group) recorded: no per-user (per-group) limit
  return rule.who.empty() || std::binary_search(rule.who.begin(), rule.who.end(), who);
}

const SiteRules::Counts& SiteRules::CountsOf(const Rule& rule, const JobSite& job) const {
  if (rule.by_group) return group_counts_[job.group];
  if (rule.partition >= 0) return partition_user_counts_[rule.partition][job.user];
  return user_counts_[job.user];
}

std::string SiteRules::Admit(JobId id, double now, double requested_walltime) {
  const JobSite& job = jobs_[id];
  const double plan = Plan(id, requested_walltime);
  const int gpus = RequestGpus(id);
  if (job.partition >= 0) {
    const SitePartition& part = site_.partitions[job.partition];
    if (requested_walltime > part.max_time_seconds) {
      return "requests " + Hours(requested_walltime) + " of wall time; partition " + part.name +
             " allows at most " + Hours(part.max_time_seconds) + " (MaxTime)";
    }
    if (part.max_gpus_per_job > 0 && gpus > part.max_gpus_per_job) {
      return "requests " + std::to_string(gpus) + " GPUs; partition " + part.name +
             " allows at most " + std::to_string(part.max_gpus_per_job) + " per job";
    }
    // Rules not yet in force reject nothing: the job may start before them (if it has not when
    // they come, it waits, and ends unfinished if nothing ever lets it start).
    if (now >= partitions_[job.partition].forever_from &&
        plan > partitions_[job.partition].forever_max_plan) {
      return "plans " + Hours(plan) + "; the run windows and drain points of partition " +
             part.name + " never allow more than " +
             Hours(partitions_[job.partition].forever_max_plan) + " at once";
    }
  }
  for (const Rule& rule : rules_) {
    if (!Applies(rule, job)) continue;
    const char* whose = rule.by_group ? "group" : "user";
    if (!std::isfinite(rule.period.until) && now >= rule.period.from) {
      if (rule.limits.max_running_jobs == 0) {
        return std::string("the ") + whose + "'s limit allows no running job";
      }
      if (rule.limits.max_gpus >= 0 && gpus > rule.limits.max_gpus) {
        return "requests " + std::to_string(gpus) + " GPUs; the " + whose + "'s limit is " +
               std::to_string(rule.limits.max_gpus) + " at once";
      }
    }
    if (rule.period.Contains(now) && rule.limits.max_jobs >= 0 &&
        CountsOf(rule, job).jobs + 1 > rule.limits.max_jobs) {
      return std::string("the ") + whose + " has " + std::to_string(CountsOf(rule, job).jobs) +
             " jobs running or waiting, the limit (max_jobs)";
    }
  }
  admitted_[id] = 1;
  if (!visible_at_.empty() && visible_at_[id] > now) {
    pending_visible_.push_back(visible_at_[id]);
    std::push_heap(pending_visible_.begin(), pending_visible_.end(), std::greater<>());
  }
  if (job.user >= 0) {
    ++user_counts_[job.user].jobs;
    if (job.partition >= 0 && !partition_user_counts_[job.partition].empty()) {
      ++partition_user_counts_[job.partition][job.user].jobs;
    }
  }
  if (job.group >= 0) ++group_counts_[job.group].jobs;
  return "";
}

bool SiteRules::MayStart(JobId id, double now, double plan, int gpus) const {
  const JobSite& job = jobs_[id];
  if (!visible_at_.empty() && now < visible_at_[id]) return false;
  for (const Rule& rule : rules_) {
    if (!rule.period.Contains(now) || !Applies(rule, job)) continue;
    const Counts& c = CountsOf(rule, job);
    if (rule.limits.max_running_jobs >= 0 && c.running + 1 > rule.limits.max_running_jobs) {
      return false;
    }
    if (rule.limits.max_gpus >= 0 && c.gpus + gpus > rule.limits.max_gpus) return false;
  }
  if (job.partition >= 0) {
    const PartitionRules& rules = partitions_[job.partition];
    if (!rules.windows.empty() && plan > WindowLimit(rules, now)) return false;
    if (!rules.drains.empty() && NextDrain(rules, now) < now + plan) return false;
  }
  for (const Down& d : downtimes_) {
    const bool mine = job.partition < 0 || ((d.partitions >> job.partition) & 1);
    if (mine && now < d.period.until && now + plan > d.period.from) return false;
  }
  return true;
}

std::string SiteRules::WhyBlocked(JobId id, double now, double plan, int gpus) const {
  const JobSite& job = jobs_[id];
  if (!visible_at_.empty() && now < visible_at_[id]) {
    return "the scheduler sees it only at t = " + std::to_string(visible_at_[id]);
  }
  for (const Rule& rule : rules_) {
    if (!rule.period.Contains(now) || !Applies(rule, job)) continue;
    const Counts& c = CountsOf(rule, job);
    const std::string whose = std::string(rule.by_group ? "group" : "user") +
                              (rule.partition >= 0 ? " in partition " +
                                                         site_.partitions[rule.partition].name
                                                   : "");
    if (rule.limits.max_running_jobs >= 0 && c.running + 1 > rule.limits.max_running_jobs) {
      return "the " + whose + " runs " + std::to_string(c.running) + " jobs, the limit";
    }
    if (rule.limits.max_gpus >= 0 && c.gpus + gpus > rule.limits.max_gpus) {
      return "the " + whose + " holds " + std::to_string(c.gpus) + " GPUs; the limit is " +
             std::to_string(rule.limits.max_gpus);
    }
  }
  if (job.partition >= 0) {
    const PartitionRules& rules = partitions_[job.partition];
    if (!rules.windows.empty() && plan > WindowLimit(rules, now)) {
      return "plans " + Hours(plan) + "; the run window allows " + Hours(WindowLimit(rules, now));
    }
    if (!rules.drains.empty() && NextDrain(rules, now) < now + plan) {
      return "its plan crosses the drain point at t = " + std::to_string(NextDrain(rules, now));
    }
  }
  for (const Down& d : downtimes_) {
    const bool mine = job.partition < 0 || ((d.partitions >> job.partition) & 1);
    if (mine && now < d.period.until && now + plan > d.period.from) {
      return "its plan overlaps the downtime [" + std::to_string(d.period.from) + ", " +
             std::to_string(d.period.until) + ")";
    }
  }
  return "";
}

void SiteRules::OnStart(JobId id, int gpus) {
  const JobSite& job = jobs_[id];
  if (job.user >= 0) {
    ++user_counts_[job.user].running;
    user_counts_[job.user].gpus += gpus;
    if (job.partition >= 0 && !partition_user_counts_[job.partition].empty()) {
      Counts& c = partition_user_counts_[job.partition][job.user];
      ++c.running;
      c.gpus += gpus;
    }
  }
  if (job.group >= 0) {
    ++group_counts_[job.group].running;
    group_counts_[job.group].gpus += gpus;
  }
}

void SiteRules::OnStop(JobId id, int gpus) {
  const JobSite& job = jobs_[id];
  if (job.user >= 0) {
    --user_counts_[job.user].running;
    user_counts_[job.user].gpus -= gpus;
    if (job.partition >= 0 && !partition_user_counts_[job.partition].empty()) {
      Counts& c = partition_user_counts_[job.partition][job.user];
      --c.running;
      c.gpus -= gpus;
    }
  }
  if (job.group >= 0) {
    --group_counts_[job.group].running;
    group_counts_[job.group].gpus -= gpus;
  }
}

void SiteRules::OnDone(JobId id) {
  if (!admitted_[id]) return;
  admitted_[id] = 0;
  const JobSite& job = jobs_[id];
  if (job.user >= 0) {
    --user_counts_[job.user].jobs;
    if (job.partition >= 0 && !partition_user_counts_[job.partition].empty()) {
      --partition_user_counts_[job.partition][job.user].jobs;
    }
  }
  if (job.group >= 0) --group_counts_[job.group].jobs;
}

double SiteRules::NextChange(double now) const {
  double best = kInf;
  while (!pending_visible_.empty() && pending_visible_.front() <= now) {
    std::pop_heap(pending_visible_.begin(), pending_visible_.end(), std::greater<>());
    pending_visible_.pop_back();
  }
  if (!pending_visible_.empty()) best = pending_visible_.front();
  auto it = std::upper_bound(changes_.begin(), changes_.end(), now);
  if (it != changes_.end()) best = std::min(best, *it);
  const double local = Local(now);
  const double minute_now = MinuteOfDay(local);
  auto next_minute = [&](int minute) {
    double delta = minute - minute_now;
    if (delta <= 1e-9) delta += 1440;
    return now + delta * 60.0;
  };
  for (const PartitionRules& p : partitions_) {
    for (const Window& w : p.windows) {
      if (now >= w.period.until) continue;
      best = std::min({best, next_minute(w.spec.start_minute), next_minute(w.spec.end_minute),
                       next_minute(0)});
    }
    if (!p.drains.empty()) best = std::min(best, NextDrain(p, now));
  }
  return best;
}

}  // namespace clustersim
