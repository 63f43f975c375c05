#include "workloads/site_inference.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <unordered_map>

#include "workloads/trace_csv.h"

namespace clustersim {
namespace {

constexpr double kHour = 3600;

// A recorded running interval of `weight` (processors, nodes or jobs).
struct Interval {
  double start, end;
  int weight;
};

// The step function of the summed weights: (time, level from then on).
std::vector<std::pair<double, int64_t>> Levels(const std::vector<Interval>& intervals) {
  std::vector<std::pair<double, int64_t>> events;
  events.reserve(intervals.size() * 2);
  for (const Interval& i : intervals) {
    if (!(i.end > i.start) || i.weight <= 0) continue;
    events.emplace_back(i.start, i.weight);
    events.emplace_back(i.end, -i.weight);
  }
  std::sort(events.begin(), events.end());  // at one time, ends (negative) first
  std::vector<std::pair<double, int64_t>> steps;
  int64_t level = 0;
  for (const auto& [t, delta] : events) {
    level += delta;
    if (!steps.empty() && steps.back().first == t) {
      steps.back().second = level;
    } else {
      steps.emplace_back(t, level);
    }
  }
  return steps;
}

// How long a level must be held to count: `hold`, or 1 % of the recorded span when the log is
// shorter than 100 holds (a day-long sample would otherwise have no peak at all).
double EffectiveHold(const std::vector<std::pair<double, int64_t>>& steps, double hold) {
  const double span = steps.empty() ? 0 : steps.back().first - steps.front().first;
  return std::min(hold, span / 100);
}

// "a day", "an hour" or "N s": the hold, for the evidence strings.
std::string HoldText(double hold) {
  if (hold <= 0) return "0 s (nothing recorded)";
  if (hold == 86400) return "a day";
  if (hold == 3600) return "an hour";
  return std::to_string(static_cast<int64_t>(std::ceil(hold))) + " s (1 % of the log)";
}

// The largest level held for at least `hold` seconds in all (EffectiveHold; brief overlaps of
// recorded ends and starts are not use): the highest L such that the time at level >= L is >=
// the hold.
int64_t HeldPeak(const std::vector<std::pair<double, int64_t>>& steps, double hold) {
  hold = EffectiveHold(steps, hold);
  std::map<int64_t, double> time_at;  // level -> seconds
  for (size_t k = 0; k + 1 < steps.size(); ++k) {
    time_at[steps[k].second] += steps[k + 1].first - steps[k].first;
  }
  double above = 0;
  for (auto it = time_at.rbegin(); it != time_at.rend(); ++it) {
    above += it->second;
    if (above >= hold) return it->first;
  }
  return 0;
}

std::string Fmt(const char* format, double v) {
  char text[64];
  std::snprintf(text, sizeof text, format, v);
  return text;
}

std::string DateOf(double unix_seconds) {
  const time_t t = static_cast<time_t>(std::floor(unix_seconds));
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &tm);
  return text;
}

// The pool key of a job: its first partition name, or "" for none.
std::string PartitionKey(const Job& job) {
  const std::string& p = job.partition.str();
  return p.substr(0, p.find(','));
}

bool Recorded(const Job& job) { return job.has_recorded_start() && job.gpus > 0; }

double RecordedEnd(const Job& job) {
  return job.has_recorded_end() ? job.recorded_end : job.recorded_start + job.duration;
}

}  // namespace

LogHeader ReadLogHeader(const std::string& path) {
  LogHeader header;
  LineReader reader(path);
  std::string_view view;
  int read = 0;
  while (reader.Next(&view) && read++ < 10000) {
    const std::string line(view);
    const size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos) continue;
    if (line[start] != ';') break;
    auto value = [&](const char* key) -> std::string {
      const size_t at = line.find(key);
      if (at == std::string::npos) return "";
      std::string v = line.substr(at + std::string(key).size());
      v.erase(0, v.find_first_not_of(" \t"));
      v.erase(v.find_last_not_of(" \t\r") + 1);
      return v;
    };
    if (std::string v = value("MaxProcs:"); !v.empty()) header.max_procs = std::atoi(v.c_str());
    if (std::string v = value("MaxNodes:"); !v.empty()) header.max_nodes = std::atoi(v.c_str());
    if (std::string v = value("UnixStartTime:"); !v.empty()) header.unix_start = std::atof(v.c_str());
    if (std::string v = value("TimeZoneString:"); !v.empty()) header.time_zone = v;
  }
  return header;
}

InferredSite InferSite(const Trace& trace, const LogHeader& header,
                       const SiteInferenceOptions& options) {
  InferredSite site;
  const std::vector<Job>& jobs = trace.jobs;
  // The recorded use is whole only before options.observed_until (the earlier part of a split
  // log: the later jobs, not read, ran after it too), so use is counted up to it.
  const double until = options.observed_until;
  const auto observed = [until](const Job& job) {
    return Recorded(job) && job.recorded_start < until;
  };
  const auto observed_end = [until](const Job& job) { return std::min(RecordedEnd(job), until); };
  // Pools by partition; partitions of under 1 % of the jobs join the largest.
  std::map<std::string, int64_t> per_partition;
  for (const Job& job : jobs) ++per_partition[PartitionKey(job)];
  std::string largest;
  for (const auto& [name, count] : per_partition) {
    if (largest.empty() && per_partition.count(largest) == 0) largest = name;
    if (count > per_partition[largest]) largest = name;
  }
  std::map<std::string, std::string> pool_of;  // partition name -> pool name
  for (const auto& [name, count] : per_partition) {
    const bool small = count * 100 < static_cast<int64_t>(jobs.size());
    pool_of[name] = small ? largest : name;
  }
  std::map<std::string, int> pool_index;
  for (const auto& [name, pool] : pool_of) {
    if (pool_index.count(pool)) continue;
    pool_index[pool] = static_cast<int>(site.pools.size());
    InferredPool p;
    p.name = pool;
    if (pool.empty()) {
      // The jobs without a partition: "batch", unless a partition of the log is named so.
      p.name = "batch";
      for (int n = 2; pool_index.count(p.name) || pool_of.count(p.name); ++n) {
        p.name = "batch_" + std::to_string(n);
      }
    }
    site.pools.push_back(p);
  }
  for (const auto& [name, pool] : pool_of) {
    if (!name.empty()) site.pools[pool_index[pool]].names.push_back(name);
  }
  if (site.pools.size() > 1) {
    site.notes.push_back("partitions of under 1 % of the jobs run in the largest, " +
                         site.pools[pool_index[pool_of[largest]]].name);
  }
  std::vector<int> job_pool(jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) job_pool[i] = pool_index[pool_of[PartitionKey(jobs[i])]];

  // A queue on nodes of its own (one pool, a header size to compare with). Peaks are levels held
  // a day in all: brief overlaps of recorded ends and starts, or a few inconsistent records,
  // are not the machine's size.
  const double hold = 86400;
  if (site.pools.size() == 1 && header.max_procs > 0) {
    std::vector<Interval> all;
    std::map<std::string, int64_t> queue_jobs;
    for (const Job& job : jobs) {
      ++queue_jobs[job.priority_class.str()];
      if (observed(job)) all.push_back({job.recorded_start, observed_end(job), job.gpus});
    }
    const auto all_levels = Levels(all);
    const int64_t peak = HeldPeak(all_levels, hold);
    if (peak > 1.1 * header.max_procs) {
      std::string best;
      int64_t best_peak = peak;
      for (const auto& [queue, count] : queue_jobs) {
        if (queue.empty() || count * 100 < static_cast<int64_t>(jobs.size())) continue;
        std::vector<Interval> others;
        for (const Job& job : jobs) {
          if (observed(job) && job.priority_class.str() != queue) {
            others.push_back({job.recorded_start, observed_end(job), job.gpus});
          }
        }
        const int64_t without = HeldPeak(Levels(others), hold);
        if (without < best_peak) {
          best_peak = without;
          best = queue;
        }
      }
      if (!best.empty() && best_peak <= 1.05 * header.max_procs) {
        InferredPool own;
        own.name = best;
        own.queues = {best};
        site.notes.push_back("queue " + best + ": with it the recorded use peaks at " +
                             std::to_string(peak) + " processors (held " +
                             HoldText(EffectiveHold(all_levels, hold)) +
                             " in all), without it at " + std::to_string(best_peak) +
                             ", against MaxProcs " + std::to_string(header.max_procs) +
                             ": its jobs ran on nodes of their own, a partition here");
        site.pools.push_back(own);
        for (size_t i = 0; i < jobs.size(); ++i) {
          if (jobs[i].priority_class.str() == best)
            job_pool[i] = static_cast<int>(site.pools.size()) - 1;
        }
      }
    }
  }

  // Node size, whole nodes, size, requested times.
  const int header_node = header.max_nodes > 0 && header.max_procs % header.max_nodes == 0
                              ? header.max_procs / header.max_nodes
                              : 1;
  for (size_t p = 0; p < site.pools.size(); ++p) {
    InferredPool& pool = site.pools[p];
    pool.node_size = header_node;
    if (auto it = options.node_size.find(""); it != options.node_size.end()) {
      pool.node_size = it->second;
    }
    if (auto it = options.node_size.find(pool.name); it != options.node_size.end()) {
      pool.node_size = it->second;
    }
    std::vector<Interval> use;
    int64_t multiples = 0, counted = 0;
    for (size_t i = 0; i < jobs.size(); ++i) {
      if (job_pool[i] != static_cast<int>(p)) continue;
      const Job& job = jobs[i];
      ++pool.jobs;
      if (job.walltime > 0 && job.walltime < 1e9) {
        pool.max_requested_seconds = std::max(pool.max_requested_seconds, job.walltime);
      }
      if (job.gpus <= 0) continue;
      ++counted;
      multiples += job.gpus % pool.node_size == 0;
      if (observed(job)) use.push_back({job.recorded_start, observed_end(job), job.gpus});
    }
    pool.whole_nodes =
        pool.node_size > 1 && (options.whole_nodes || (counted > 0 && multiples == counted));
    const auto levels = Levels(use);
    // A queue on nodes of its own is sized for its busiest hour: its jobs did not wait.
    const double pool_hold = EffectiveHold(levels, pool.queues.empty() ? hold : kHour);
    pool.peak_processors = static_cast<int>(HeldPeak(levels, pool_hold));
    const int peak_nodes = (pool.peak_processors + pool.node_size - 1) / pool.node_size;
    const bool header_fits = site.pools.size() == 1 && header.max_nodes > 0 &&
                             header.max_procs == header.max_nodes * pool.node_size &&
                             pool.queues.empty() &&
                             pool.peak_processors <= 1.1 * header.max_procs;
    if (header_fits || (p == 0 && header.max_nodes > 0 && pool.queues.empty() &&
                        pool.peak_processors <= 1.1 * header.max_procs &&
                        site.pools.size() == 2 && !site.pools[1].queues.empty())) {
      pool.nodes = header.max_nodes;
      pool.size_evidence = "the header's MaxNodes " + std::to_string(header.max_nodes) +
                           " (recorded peak " + std::to_string(pool.peak_processors) +
                           " processors, held " + HoldText(pool_hold) + " in all)";
    } else {
      pool.nodes = std::max(1, peak_nodes);
      pool.size_evidence = "the recorded peak, " + std::to_string(pool.peak_processors) +
                           " processors held " + HoldText(pool_hold) + " in all";
    }
  }

  // Downtime per pool: nothing of the pool runs while some of its jobs wait.
  for (size_t p = 0; p < site.pools.size(); ++p) {
    std::vector<Interval> use;
    for (size_t i = 0; i < jobs.size(); ++i) {
      if (job_pool[i] == static_cast<int>(p) && observed(jobs[i])) {
        use.push_back({jobs[i].recorded_start, observed_end(jobs[i]), 1});
      }
    }
    auto levels = Levels(use);
    // An idle period reaching the end of the observed record ends there: what came after is
    // not known.
    if (std::isfinite(until) && !levels.empty() && levels.back().first < until) {
      levels.emplace_back(until, 0);
    }
    for (size_t k = 0; k + 1 < levels.size(); ++k) {
      if (levels[k].second != 0) continue;
      const double a = levels[k].first, b = levels[k + 1].first;
      if (b - a < options.min_downtime_seconds) continue;
      int64_t waiting = 0;
      for (size_t i = 0; i < jobs.size(); ++i) {
        const Job& job = jobs[i];
        if (job_pool[i] == static_cast<int>(p) && job.has_recorded_start() &&
            job.submit_time < a && job.recorded_start >= b) {
          ++waiting;
        }
      }
      if (waiting > 0) site.downtimes.push_back({a, b, waiting, static_cast<int>(p)});
    }
  }
  std::sort(site.downtimes.begin(), site.downtimes.end(),
            [](const auto& x, const auto& y) { return x.start < y.start; });

  // Wall-time kills.
  std::vector<double> overrun;
  int64_t with_request = 0;
  for (const Job& job : jobs) {
    if (!(job.walltime > 0) || !job.has_recorded_start() || job.gpus <= 0) continue;
    ++with_request;
    if (job.duration >= job.walltime) overrun.push_back(job.duration - job.walltime);
  }
  std::sort(overrun.begin(), overrun.end());
  if (overrun.empty()) {
    site.kill = true;
    site.kill_evidence = with_request > 0
                             ? "no job ran as long as it requested: kills cannot be told from the "
                               "log; the spec keeps them (the default)"
                             : "the log has no requested times";
  } else {
    const auto long_over = std::count_if(overrun.begin(), overrun.end(),
                                         [](double o) { return o > kHour; });
    const double p90 = overrun[static_cast<size_t>(0.9 * (overrun.size() - 1))];
    const std::string counts =
        std::to_string(overrun.size()) + " of " + std::to_string(with_request) +
        " jobs with a requested time ran at least that long; " + std::to_string(long_over) +
        " of them more than an hour past it; overrun p90 " + Fmt("%.0f", p90) + " s";
    if (long_over * 20 < static_cast<int64_t>(overrun.size())) {
      site.kill = true;
      site.grace_seconds = std::ceil(p90 / 60) * 60;
      site.kill_evidence = counts + ": killed at the requested time after a grace of " +
                           Fmt("%.0f", site.grace_seconds) + " s";
    } else {
      site.kill = false;
      site.kill_evidence = counts + ": the site did not kill at the requested time";
    }
  }

  // Per-user running-job caps per calendar quarter (90-day blocks without a Unix origin).
  const bool dated = !std::isnan(trace.unix_origin);
  auto quarter_of = [&](double t) -> int64_t {
    if (!dated) return static_cast<int64_t>(std::floor(t / (90 * 86400.0)));
    const time_t u = static_cast<time_t>(std::floor(trace.unix_origin + t));
    std::tm tm{};
    gmtime_r(&u, &tm);
    return (tm.tm_year + 1900) * 4 + tm.tm_mon / 3;
  };
  auto quarter_start = [&](int64_t q) -> double {
    if (!dated) return q * 90 * 86400.0;
    std::tm tm{};
    tm.tm_year = static_cast<int>(q / 4) - 1900;
    tm.tm_mon = static_cast<int>(q % 4) * 3;
    tm.tm_mday = 1;
    return static_cast<double>(timegm(&tm)) - trace.unix_origin;
  };
  std::map<std::pair<int64_t, uint32_t>, std::vector<Interval>> runs;  // (quarter, user)
  for (const Job& job : jobs) {
    if (!observed(job) || job.user.empty()) continue;
    runs[{quarter_of(job.recorded_start), job.user.id()}].push_back(
        {job.recorded_start, observed_end(job), 1});
  }
  std::map<int64_t, std::vector<int64_t>> maxima;  // quarter -> users' max running jobs
  for (const auto& [key, intervals] : runs) {
    maxima[key.first].push_back(HeldPeak(Levels(intervals), 60));
  }
  // A quarter's cap: the highest M that at least min_users_at_cap users reach (or two, when
  // nobody else comes within half of it: a plateau far above the rest) and at most one user
  // exceeds. A cap found stays until a quarter contradicts it (two or more users above it).
  std::vector<std::pair<int64_t, InferredSite::Cap>> found;
  for (auto& [quarter, values] : maxima) {
    std::sort(values.rbegin(), values.rend());
    InferredSite::Cap cap;
    for (size_t k = 0; k < values.size();) {
      const int64_t m = values[k];
      if (m < 2 || k > 1) break;  // k users above m
      const auto at = std::count(values.begin(), values.end(), m);
      const size_t below = k + static_cast<size_t>(at);
      const int64_t next = below < values.size() ? values[below] : 0;
      if (at >= options.min_users_at_cap || (at >= 2 && 2 * next <= m)) {
        cap.max_running_jobs = static_cast<int>(m);
        cap.users_at_cap = static_cast<int>(at);
        cap.users_above = static_cast<int>(k);
        break;
      }
      k = below;
    }
    found.emplace_back(quarter, cap);
  }
  for (size_t k = 0; k < found.size(); ++k) {
    InferredSite::Cap c = found[k].second;
    const double from = quarter_start(found[k].first);
    const double until = quarter_start(found[k].first + 1);
    if (c.max_running_jobs == 0 && !site.caps.empty() && site.caps.back().until == from) {
      // No cap of its own: the last one holds unless two users run more.
      const auto& values = maxima[found[k].first];
      const auto above = std::count_if(values.begin(), values.end(), [&](int64_t v) {
        return v > site.caps.back().max_running_jobs;
      });
      if (above <= 1) site.caps.back().until = until;
      continue;
    }
    if (c.max_running_jobs == 0) continue;
    if (!site.caps.empty() && site.caps.back().max_running_jobs == c.max_running_jobs &&
        site.caps.back().until == from) {
      site.caps.back().until = until;
      site.caps.back().users_at_cap = std::max(site.caps.back().users_at_cap, c.users_at_cap);
      continue;
    }
    c.from = from;
    c.until = until;
    site.caps.push_back(c);
  }
  // The last cap holds to the end of the log and after.
  if (!site.caps.empty() && site.caps.back().until >= quarter_start(found.back().first + 1)) {
    site.caps.back().until = std::numeric_limits<double>::infinity();
  }
  return site;
}

std::string SiteSpecJson(const InferredSite& site, const SiteInferenceOptions& options) {
  using nlohmann::ordered_json;
  ordered_json nodes = ordered_json::array();
  ordered_json partitions = ordered_json::array();
  for (const InferredPool& pool : site.pools) {
    ordered_json group;
    group["name"] = pool.name;
    group["count"] = pool.nodes;
    group["gpu_type"] = options.gpu_type;
    group["gpus_per_node"] = pool.whole_nodes ? 1 : pool.node_size;
    nodes.push_back(group);
    ordered_json part;
    part["name"] = pool.name;
    if (!pool.names.empty() && !(pool.names.size() == 1 && pool.names[0] == pool.name)) {
      part["names"] = pool.names;
    }
    if (!pool.queues.empty()) part["queues"] = pool.queues;
    part["nodes"] = {pool.name};
    if (pool.whole_nodes) part["processors_per_gpu"] = pool.node_size;
    partitions.push_back(part);
  }
  ordered_json s;
  s["partitions"] = partitions;
  if (!site.caps.empty()) {
    ordered_json limits = ordered_json::array();
    for (const InferredSite::Cap& c : site.caps) {
      ordered_json rule;
      rule["max_running_jobs"] = c.max_running_jobs;
      if (c.from > 0) rule["from"] = c.from;
      if (std::isfinite(c.until)) rule["until"] = c.until;
      limits.push_back(rule);
    }
    s["user_limits"] = limits;
  }
  if (!site.downtimes.empty()) {
    ordered_json down = ordered_json::array();
    for (const InferredSite::Down& d : site.downtimes) {
      ordered_json period = {{"start", d.start}, {"end", d.end}};
      // Found per pool: with several, it holds the pool's partition only.
      if (site.pools.size() > 1) period["partitions"] = {site.pools[d.pool].name};
      down.push_back(period);
    }
    s["downtime"] = down;
  }
  ordered_json wall;
  wall["kill"] = site.kill;
  if (site.kill && site.grace_seconds > 0) wall["grace"] = site.grace_seconds;
  s["walltime"] = wall;
  ordered_json spec;
  spec["nodes"] = nodes;
  spec["site"] = s;
  return spec.dump(2) + "\n";
}

std::string SiteReport(const InferredSite& site, const Trace& trace) {
  std::string out;
  const bool dated = !std::isnan(trace.unix_origin);
  auto when = [&](double t) {
    return dated ? DateOf(trace.unix_origin + t) + " UTC" : "t = " + Fmt("%.0f", t) + " s";
  };
  for (const InferredPool& p : site.pools) {
    out += "pool " + p.name + ": " + std::to_string(p.jobs) + " jobs; " +
           std::to_string(p.nodes) + " nodes of " + std::to_string(p.node_size) +
           " processors (" + p.size_evidence + ")";
    out += p.whole_nodes ? "; every job uses whole nodes: one GPU per node, processors_per_gpu " +
                               std::to_string(p.node_size)
                         : "; jobs share nodes: one GPU per processor";
    if (p.max_requested_seconds > 0) {
      out += "; requested times up to " + Fmt("%.1f", p.max_requested_seconds / kHour) +
             " h (no MaxTime set: a limit would reject jobs the log ran)";
    }
    out += "\n";
  }
  for (const std::string& note : site.notes) out += note + "\n";
  out += "downtime: " + std::to_string(site.downtimes.size()) +
         " periods in which nothing ran while jobs waited";
  for (size_t k = 0; k < site.downtimes.size() && k < 5; ++k) {
    const auto& d = site.downtimes[k];
    out += (k ? "; " : ": ") + when(d.start) + " for " + Fmt("%.1f", (d.end - d.start) / kHour) +
           " h (" + std::to_string(d.waiting) + " waiting" +
           (site.pools.size() > 1 ? ", pool " + site.pools[d.pool].name : "") + ")";
  }
  if (site.downtimes.size() > 5) out += "; ...";
  out += " (sure when many jobs wait across a period; a quiet night with one waiting job may be "
         "a hold, not a downtime)\n";
  out += "wall-time kills: " + site.kill_evidence + "\n";
  if (site.caps.empty()) {
    out += "per-user running-job limit: none found (no quarter where several users sit at one "
           "maximum and nobody runs more)\n";
  }
  for (const InferredSite::Cap& c : site.caps) {
    out += "per-user running-job limit " + std::to_string(c.max_running_jobs) + " from " +
           when(c.from) + (std::isfinite(c.until) ? " until " + when(c.until) : " on") + " (" +
           std::to_string(c.users_at_cap) + " users reach it in a quarter, at most " +
           std::to_string(c.users_above) +
           " above: fairly sure with 5 or more, a guess with 2 or 3)\n";
  }
  out += "not inferred: priorities, fair share and backfill settings (calibrate them: "
         "clustersim validate --calibrate)\n";
  return out;
}

}  // namespace clustersim
