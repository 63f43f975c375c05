#include "sim/hardware/site.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "sim/util/duration.h"
#include "sim/util/json_file.h"
#include "sim/util/suggest.h"

namespace clustersim {
namespace {

using nlohmann::json;

// Throws for a key of `object` not in `known`, suggesting the nearest one.
void CheckKeys(const json& object, std::initializer_list<const char*> known,
               const std::string& origin, const std::string& where) {
  if (!object.is_object()) throw JsonValueError(origin, where, "expected an object");
  std::vector<std::string> names(known.begin(), known.end());
  for (const auto& [key, value] : object.items()) {
    if (std::find(names.begin(), names.end(), key) == names.end()) {
      throw JsonValueError(origin, where.empty() ? key : where + "." + key,
                           "unknown key \"" + key + "\"" + DidYouMean(key, names) +
                               " (known: " + JoinNames(names) + ")");
    }
  }
}

int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  // Howard Hinnant's days_from_civil (proleptic Gregorian calendar).
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

SiteTime ParseTime(const json& value, const std::string& origin, const std::string& where) {
  if (value.is_number()) {
    const double v = value.get<double>();
    if (!std::isfinite(v)) throw JsonValueError(origin, where, "expected a finite number");
    return SiteTime{v, false};
  }
  if (value.is_string()) {
    double seconds = 0;
    if (ParseSiteDate(value.get<std::string>(), &seconds)) return SiteTime{seconds, true};
  }
  throw JsonValueError(origin, where,
                       "expected seconds of the trace's clock or a date \"YYYY-MM-DD\" or "
                       "\"YYYY-MM-DDTHH:MM[:SS]\" (local clock), got " +
                           value.dump());
}

int ParseClock(const std::string& text, const std::string& origin, const std::string& where) {
  int h = 0, m = 0;
  char extra = 0;
  if (std::sscanf(text.c_str(), "%d:%d%c", &h, &m, &extra) != 2 || h < 0 || h > 24 || m < 0 ||
      m > 59 || (h == 24 && m != 0)) {
    throw JsonValueError(origin, where, "expected a time of day \"HH:MM\", got \"" + text + "\"");
  }
  return h * 60 + m;
}

DayMask ParseDays(const json& value, const std::string& origin, const std::string& where) {
  static const char* kNames[] = {"monday", "tuesday",  "wednesday", "thursday",
                                 "friday", "saturday", "sunday"};
  const std::string text = RequireString(value, origin, where);
  auto day = [&](std::string name) {
    std::transform(name.begin(), name.end(), name.begin(), ::tolower);
    // A day's first three letters or its whole name.
    for (int i = 0; i < 7; ++i) {
      if (name == kNames[i] || (name.size() == 3 && name.compare(0, 3, kNames[i], 3) == 0)) {
        return i;
      }
    }
    throw JsonValueError(origin, where,
                         "expected days such as \"Mon-Fri\", \"Sat,Sun\" or \"all\", got \"" +
                             text + "\"");
  };
  if (text == "all") return kEveryDay;
  DayMask mask = 0;
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t end = text.find(',', begin);
    if (end == std::string::npos) end = text.size();
    const std::string part = text.substr(begin, end - begin);
    const size_t dash = part.find('-');
    if (dash == std::string::npos) {
      mask |= DayMask(1u << day(part));
    } else {
      const int a = day(part.substr(0, dash));
      const int b = day(part.substr(dash + 1));
      for (int d = a;; d = (d + 1) % 7) {  // Fri-Mon wraps over the weekend
        mask |= DayMask(1u << d);
        if (d == b) break;
      }
    }
    begin = end + 1;
  }
  return mask;
}

int NonNegativeInt(const json& value, const std::string& origin, const std::string& where) {
  if (!value.is_number_integer() || value.get<int64_t>() < 0 ||
      value.get<int64_t>() > 1'000'000'000) {
    throw JsonValueError(origin, where, "expected an integer >= 0, got " + value.dump());
  }
  return static_cast<int>(value.get<int64_t>());
}

double PositiveDuration(const json& value, const std::string& origin, const std::string& where) {
  const double s = RequireDuration(value, origin, where);
  if (!(s > 0)) throw JsonValueError(origin, where, "expected a duration > 0");
  return s;
}

std::vector<std::string> Names(const json& value, const std::string& origin,
                               const std::string& where) {
  std::vector<std::string> names;
  if (!value.is_array()) throw JsonValueError(origin, where, "expected an array of names");
  for (size_t i = 0; i < value.size(); ++i) {
    const json& v = value[i];
    // Log ids are numbers in SWF: accept them as numbers too.
    if (v.is_number_integer()) {
      names.push_back(std::to_string(v.get<int64_t>()));
    } else {
      names.push_back(RequireString(v, origin, where + "[" + std::to_string(i) + "]"));
    }
  }
  return names;
}

void ParsePeriod(const json& rule, const std::string& origin, const std::string& where,
                 std::optional<SiteTime>* from, std::optional<SiteTime>* until) {
  if (rule.contains("from")) *from = ParseTime(rule["from"], origin, where + ".from");
  if (rule.contains("until")) *until = ParseTime(rule["until"], origin, where + ".until");
  if (*from && *until && (*from)->is_date == (*until)->is_date &&
      !((*until)->seconds > (*from)->seconds)) {
    throw JsonValueError(origin, where + ".until", "expected a time after \"from\"");
  }
}

std::vector<LimitRule> ParseLimits(const json& value, const std::string& origin,
                                   const std::string& where) {
  if (!value.is_array()) throw JsonValueError(origin, where, "expected an array of limits");
  std::vector<LimitRule> rules;
  for (size_t i = 0; i < value.size(); ++i) {
    const json& r = value[i];
    const std::string w = where + "[" + std::to_string(i) + "]";
    CheckKeys(r, {"max_running_jobs", "max_gpus", "max_jobs", "names", "from", "until"}, origin,
              w);
    LimitRule rule;
    if (r.contains("max_running_jobs")) {
      rule.limits.max_running_jobs =
          NonNegativeInt(r["max_running_jobs"], origin, w + ".max_running_jobs");
    }
    if (r.contains("max_gpus")) rule.limits.max_gpus = NonNegativeInt(r["max_gpus"], origin, w + ".max_gpus");
    if (r.contains("max_jobs")) rule.limits.max_jobs = NonNegativeInt(r["max_jobs"], origin, w + ".max_jobs");
    if (r.contains("names")) rule.names = Names(r["names"], origin, w + ".names");
    ParsePeriod(r, origin, w, &rule.from, &rule.until);
    rules.push_back(std::move(rule));
  }
  return rules;
}

std::vector<RunWindow> ParseWindows(const json& value, const std::string& origin,
                                   const std::string& where) {
  if (!value.is_array()) throw JsonValueError(origin, where, "expected an array of run windows");
  std::vector<RunWindow> windows;
  for (size_t i = 0; i < value.size(); ++i) {
    const json& r = value[i];
    const std::string w = where + "[" + std::to_string(i) + "]";
    CheckKeys(r, {"days", "start", "end", "max_time", "from", "until"}, origin, w);
    RunWindow window;
    if (r.contains("days")) window.days = ParseDays(r["days"], origin, w + ".days");
    if (r.contains("start")) {
      window.start_minute = ParseClock(RequireString(r["start"], origin, w + ".start"), origin,
                                       w + ".start");
      if (window.start_minute == 1440) {
        throw JsonValueError(origin, w + ".start",
                             "a window does not start at 24:00: write \"00:00\" and the next day");
      }
    }
    if (r.contains("end")) {
      window.end_minute =
          ParseClock(RequireString(r["end"], origin, w + ".end"), origin, w + ".end") % 1440;
    }
    window.max_time_seconds =
        PositiveDuration(RequireMember(r, "max_time", origin, w), origin, w + ".max_time");
    ParsePeriod(r, origin, w, &window.from, &window.until);
    windows.push_back(window);
  }
  return windows;
}

std::vector<DrainRule> ParseDrains(const json& value, const std::string& origin,
                                   const std::string& where) {
  if (!value.is_array()) throw JsonValueError(origin, where, "expected an array of drains");
  std::vector<DrainRule> drains;
  for (size_t i = 0; i < value.size(); ++i) {
    const json& r = value[i];
    const std::string w = where + "[" + std::to_string(i) + "]";
    CheckKeys(r, {"days", "at", "from", "until"}, origin, w);
    DrainRule drain;
    if (r.contains("days")) drain.days = ParseDays(r["days"], origin, w + ".days");
    const json& at = RequireMember(r, "at", origin, w);
    if (!at.is_array() || at.empty()) {
      throw JsonValueError(origin, w + ".at", "expected a non-empty array of times \"HH:MM\"");
    }
    for (size_t k = 0; k < at.size(); ++k) {
      const std::string wk = w + ".at[" + std::to_string(k) + "]";
      drain.minutes.push_back(ParseClock(RequireString(at[k], origin, wk), origin, wk) % 1440);
    }
    std::sort(drain.minutes.begin(), drain.minutes.end());
    drain.minutes.erase(std::unique(drain.minutes.begin(), drain.minutes.end()),
                        drain.minutes.end());
    ParsePeriod(r, origin, w, &drain.from, &drain.until);
    drains.push_back(std::move(drain));
  }
  return drains;
}

int FindGroup(const json& value, const std::vector<std::string>& group_names,
              const std::string& origin, const std::string& where) {
  if (value.is_number_integer()) {
    const int64_t i = value.get<int64_t>();
    if (i < 0 || i >= static_cast<int64_t>(group_names.size())) {
      throw JsonValueError(origin, where,
                           "no node group " + std::to_string(i) + " (the spec has " +
                               std::to_string(group_names.size()) + ")");
    }
    return static_cast<int>(i);
  }
  const std::string name = RequireString(value, origin, where);
  for (size_t g = 0; g < group_names.size(); ++g) {
    if (group_names[g] == name) return static_cast<int>(g);
  }
  throw JsonValueError(origin, where,
                       "no node group named \"" + name +
                           "\" (give node groups a \"name\", or use their index)");
}

SitePartition ParsePartition(const json& p, const std::string& origin, const std::string& w,
                             const std::vector<std::string>& group_names) {
  CheckKeys(p,
            {"name", "names", "queues", "nodes", "default", "max_time", "default_time",
             "max_gpus_per_job", "processors_per_gpu", "priority_tier", "priority_job_factor",
             "user_limits", "run_windows", "drains"},
            origin, w);
  SitePartition part;
  part.name = RequireString(RequireMember(p, "name", origin, w), origin, w + ".name");
  if (part.name.empty()) throw JsonValueError(origin, w + ".name", "expected a non-empty name");
  part.names = p.contains("names") ? Names(p["names"], origin, w + ".names")
                                   : std::vector<std::string>{part.name};
  if (p.contains("queues")) part.queues = Names(p["queues"], origin, w + ".queues");
  if (p.contains("nodes")) {
    const json& nodes = p["nodes"];
    if (!nodes.is_array() || nodes.empty()) {
      throw JsonValueError(origin, w + ".nodes",
                           "expected a non-empty array of node group names or indices");
    }
    for (size_t k = 0; k < nodes.size(); ++k) {
      part.node_groups.push_back(
          FindGroup(nodes[k], group_names, origin, w + ".nodes[" + std::to_string(k) + "]"));
    }
    std::sort(part.node_groups.begin(), part.node_groups.end());
    part.node_groups.erase(std::unique(part.node_groups.begin(), part.node_groups.end()),
                           part.node_groups.end());
  } else {
    for (size_t g = 0; g < group_names.size(); ++g) part.node_groups.push_back(static_cast<int>(g));
  }
  if (p.contains("max_time")) {
    part.max_time_seconds = PositiveDuration(p["max_time"], origin, w + ".max_time");
  }
  if (p.contains("default_time")) {
    part.default_time_seconds = PositiveDuration(p["default_time"], origin, w + ".default_time");
  }
  if (p.contains("max_gpus_per_job")) {
    part.max_gpus_per_job = RequirePositiveInt(p["max_gpus_per_job"], origin, w + ".max_gpus_per_job");
  }
  if (p.contains("processors_per_gpu")) {
    part.processors_per_gpu =
        RequirePositiveInt(p["processors_per_gpu"], origin, w + ".processors_per_gpu");
  }
  if (p.contains("priority_tier")) {
    part.priority_tier = NonNegativeInt(p["priority_tier"], origin, w + ".priority_tier");
  }
  if (p.contains("priority_job_factor")) {
    part.priority_job_factor = RequireNumber(p["priority_job_factor"], origin, w + ".priority_job_factor");
    if (!(part.priority_job_factor >= 0)) {
      throw JsonValueError(origin, w + ".priority_job_factor", "expected a number >= 0");
    }
  }
  if (p.contains("user_limits")) part.user_limits = ParseLimits(p["user_limits"], origin, w + ".user_limits");
  if (p.contains("run_windows")) part.run_windows = ParseWindows(p["run_windows"], origin, w + ".run_windows");
  if (p.contains("drains")) part.drains = ParseDrains(p["drains"], origin, w + ".drains");
  return part;
}

void ParsePriority(const json& p, const std::string& origin, MultifactorWeights* weights) {
  const std::string w = "site.priority";
  CheckKeys(p,
            {"age", "job_size", "fairshare", "partition", "qos", "max_age", "favor_small",
             "half_life", "qos_priority"},
            origin, w);
  auto weight = [&](const char* key, double* out) {
    if (!p.contains(key)) return;
    *out = RequireNumber(p[key], origin, w + "." + key);
    if (!(*out >= 0)) throw JsonValueError(origin, w + "." + key, "expected a weight >= 0");
  };
  weight("age", &weights->age);
  weight("job_size", &weights->job_size);
  weight("fairshare", &weights->fairshare);
  weight("partition", &weights->partition);
  weight("qos", &weights->qos);
  if (p.contains("max_age")) weights->max_age_seconds = PositiveDuration(p["max_age"], origin, w + ".max_age");
  if (p.contains("half_life")) {
    weights->half_life_seconds = PositiveDuration(p["half_life"], origin, w + ".half_life");
  }
  if (p.contains("favor_small")) {
    if (!p["favor_small"].is_boolean()) {
      throw JsonValueError(origin, w + ".favor_small", "expected true or false");
    }
    weights->favor_small = p["favor_small"].get<bool>();
  }
  if (p.contains("qos_priority")) {
    const json& q = p["qos_priority"];
    if (!q.is_object()) throw JsonValueError(origin, w + ".qos_priority", "expected an object");
    for (const auto& [name, value] : q.items()) {
      const double v = RequireNumber(value, origin, w + ".qos_priority." + name);
      if (!(v >= 0)) throw JsonValueError(origin, w + ".qos_priority." + name, "expected >= 0");
      weights->qos_priority[name] = v;
    }
  }
}

void ParseBackfill(const json& b, const std::string& origin, BackfillLimits* limits) {
  const std::string w = "site.backfill";
  CheckKeys(b, {"max_job_test", "window", "interval"}, origin, w);
  if (b.contains("max_job_test")) {
    limits->max_job_test = RequirePositiveInt(b["max_job_test"], origin, w + ".max_job_test");
  }
  if (b.contains("window")) limits->window_seconds = PositiveDuration(b["window"], origin, w + ".window");
  if (b.contains("interval")) {
    limits->interval_seconds = RequireDuration(b["interval"], origin, w + ".interval");
    if (!(limits->interval_seconds >= 0)) {
      throw JsonValueError(origin, w + ".interval", "expected a duration >= 0");
    }
  }
}

int PartitionIndex(const std::vector<SitePartition>& parts, const json& value,
                   const std::string& origin, const std::string& where) {
  const std::string name = RequireString(value, origin, where);
  for (size_t i = 0; i < parts.size(); ++i) {
    if (parts[i].name == name) return static_cast<int>(i);
  }
  throw JsonValueError(origin, where, "no partition named \"" + name + "\"");
}

}  // namespace

bool ParseSiteDate(const std::string& text, double* seconds) {
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  char sep = 0;
  const int size = static_cast<int>(text.size());
  // The whole text must be read: a date, or a date and a time with or without seconds.
  int used = -1;
  bool ok = std::sscanf(text.c_str(), "%4d-%2d-%2d%n", &y, &mo, &d, &used) == 3 && used == size;
  if (!ok) {
    used = -1;
    ok = std::sscanf(text.c_str(), "%4d-%2d-%2d%c%2d:%2d%n", &y, &mo, &d, &sep, &h, &mi, &used) ==
             6 &&
         used == size;
  }
  if (!ok) {
    used = -1;
    ok = std::sscanf(text.c_str(), "%4d-%2d-%2d%c%2d:%2d:%2d%n", &y, &mo, &d, &sep, &h, &mi, &s,
                     &used) == 7 &&
         used == size;
  }
  if (!ok || (sep != 0 && sep != 'T' && sep != ' ')) return false;
  static const int kDaysIn[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  if (mo < 1 || mo > 12 || d < 1 || d > kDaysIn[mo - 1] || (mo == 2 && d == 29 && !leap) || h < 0 ||
      h > 23 || mi < 0 || mi > 59 || s < 0 || s > 60) {
    return false;
  }
  *seconds = static_cast<double>(DaysFromCivil(y, static_cast<unsigned>(mo),
                                               static_cast<unsigned>(d))) *
                 86400.0 +
             h * 3600.0 + mi * 60.0 + s;
  return true;
}

int WeekdayOf(double local_seconds) {
  const int64_t days = static_cast<int64_t>(std::floor(local_seconds / 86400.0));
  // 1970-01-01 was a Thursday (3 with Monday = 0).
  return static_cast<int>(((days + 3) % 7 + 7) % 7);
}

double MinuteOfDay(double local_seconds) {
  const double day = std::floor(local_seconds / 86400.0) * 86400.0;
  return (local_seconds - day) / 60.0;
}

bool SiteSpec::HasStartRules() const {
  // A rule with only max_jobs acts at submission (Admit), under every policy.
  auto holds_starts = [](const std::vector<LimitRule>& rules) {
    return std::any_of(rules.begin(), rules.end(), [](const LimitRule& rule) {
      return rule.limits.max_running_jobs >= 0 || rule.limits.max_gpus >= 0;
    });
  };
  if (holds_starts(user_limits) || holds_starts(group_limits) || !downtimes.empty()) return true;
  if (scheduler_latency_seconds > 0) return true;
  for (const SitePartition& p : partitions) {
    if (holds_starts(p.user_limits) || !p.run_windows.empty() || !p.drains.empty()) return true;
  }
  return false;
}

bool SiteSpec::UsesDates() const {
  auto dated = [](const std::optional<SiteTime>& t) { return t && t->is_date; };
  for (const auto* rules : {&user_limits, &group_limits}) {
    for (const LimitRule& r : *rules) {
      if (dated(r.from) || dated(r.until)) return true;
    }
  }
  for (const Downtime& d : downtimes) {
    if (d.start.is_date || d.end.is_date) return true;
  }
  for (const SitePartition& p : partitions) {
    for (const LimitRule& r : p.user_limits) {
      if (dated(r.from) || dated(r.until)) return true;
    }
    for (const RunWindow& r : p.run_windows) {
      if (dated(r.from) || dated(r.until)) return true;
    }
    for (const DrainRule& r : p.drains) {
      if (dated(r.from) || dated(r.until)) return true;
    }
    if (!p.run_windows.empty() || !p.drains.empty()) return true;  // weekly calendars
  }
  return false;
}

SiteSpec ParseSite(const json& site, const std::string& origin,
                   const std::vector<std::string>& group_names) {
  CheckKeys(site,
            {"clock", "partitions", "user_limits", "group_limits", "downtime", "walltime",
             "priority", "backfill", "scheduler"},
            origin, "site");
  SiteSpec spec;
  spec.present = true;
  if (site.contains("clock")) {
    const json& c = site["clock"];
    CheckKeys(c, {"utc_offset_hours"}, origin, "site.clock");
    if (c.contains("utc_offset_hours")) {
      const double h = RequireNumber(c["utc_offset_hours"], origin, "site.clock.utc_offset_hours");
      if (!(h >= -24 && h <= 24)) {
        throw JsonValueError(origin, "site.clock.utc_offset_hours", "expected hours in -24..24");
      }
      spec.utc_offset_seconds = h * 3600;
    }
  }
  if (site.contains("partitions")) {
    const json& parts = site["partitions"];
    if (!parts.is_array() || parts.empty()) {
      throw JsonValueError(origin, "site.partitions", "expected a non-empty array of partitions");
    }
    int defaults = 0;
    for (size_t i = 0; i < parts.size(); ++i) {
      const std::string w = "site.partitions[" + std::to_string(i) + "]";
      spec.partitions.push_back(ParsePartition(parts[i], origin, w, group_names));
      for (size_t k = 0; k + 1 < spec.partitions.size(); ++k) {
        if (spec.partitions[k].name == spec.partitions.back().name) {
          throw JsonValueError(origin, w + ".name",
                               "partition \"" + spec.partitions.back().name + "\" is listed twice");
        }
      }
      if (parts[i].contains("default")) {
        if (!parts[i]["default"].is_boolean()) {
          throw JsonValueError(origin, w + ".default", "expected true or false");
        }
        if (parts[i]["default"].get<bool>()) {
          spec.default_partition = static_cast<int>(i);
          if (++defaults > 1) throw JsonValueError(origin, w + ".default", "a second default partition");
        }
      }
    }
  }
  if (site.contains("user_limits")) spec.user_limits = ParseLimits(site["user_limits"], origin, "site.user_limits");
  if (site.contains("group_limits")) {
    spec.group_limits = ParseLimits(site["group_limits"], origin, "site.group_limits");
  }
  if (site.contains("downtime")) {
    const json& d = site["downtime"];
    if (!d.is_array()) throw JsonValueError(origin, "site.downtime", "expected an array");
    for (size_t i = 0; i < d.size(); ++i) {
      const std::string w = "site.downtime[" + std::to_string(i) + "]";
      CheckKeys(d[i], {"start", "end", "partitions"}, origin, w);
      Downtime down;
      down.start = ParseTime(RequireMember(d[i], "start", origin, w), origin, w + ".start");
      down.end = ParseTime(RequireMember(d[i], "end", origin, w), origin, w + ".end");
      if (down.start.is_date == down.end.is_date && !(down.end.seconds > down.start.seconds)) {
        throw JsonValueError(origin, w + ".end", "expected a time after the start");
      }
      if (d[i].contains("partitions")) {
        const json& names = d[i]["partitions"];
        if (!names.is_array()) throw JsonValueError(origin, w + ".partitions", "expected an array");
        for (size_t k = 0; k < names.size(); ++k) {
          down.partitions.push_back(PartitionIndex(spec.partitions, names[k], origin,
                                                   w + ".partitions[" + std::to_string(k) + "]"));
        }
      }
      spec.downtimes.push_back(std::move(down));
    }
  }
  if (site.contains("walltime")) {
    const json& w = site["walltime"];
    CheckKeys(w, {"kill", "grace"}, origin, "site.walltime");
    if (w.contains("kill")) {
      if (!w["kill"].is_boolean()) throw JsonValueError(origin, "site.walltime.kill", "expected true or false");
      spec.kill_at_walltime = w["kill"].get<bool>();
    }
    if (w.contains("grace")) {
      spec.over_time_limit_seconds = RequireDuration(w["grace"], origin, "site.walltime.grace");
      if (!(spec.over_time_limit_seconds >= 0)) {
        throw JsonValueError(origin, "site.walltime.grace", "expected a duration >= 0");
      }
    }
  }
  if (site.contains("scheduler")) {
    const json& c = site["scheduler"];
    CheckKeys(c, {"cycle", "on_end", "on_submit", "latency"}, origin, "site.scheduler");
    if (c.contains("latency")) {
      spec.scheduler_latency_seconds =
          RequireDuration(c["latency"], origin, "site.scheduler.latency");
      if (!(spec.scheduler_latency_seconds >= 0)) {
        throw JsonValueError(origin, "site.scheduler.latency", "expected a duration >= 0");
      }
    }
    if (c.contains("cycle")) {
      spec.scheduler_cycle_seconds = RequireDuration(c["cycle"], origin, "site.scheduler.cycle");
      if (!(spec.scheduler_cycle_seconds >= 0)) {
        throw JsonValueError(origin, "site.scheduler.cycle", "expected a duration >= 0");
      }
    }
    for (const auto& [key, flag] : {std::pair{"on_end", &spec.schedule_on_end},
                                    std::pair{"on_submit", &spec.schedule_on_submit}}) {
      if (!c.contains(key)) continue;
      if (!c[key].is_boolean()) {
        throw JsonValueError(origin, std::string("site.scheduler.") + key, "expected true or false");
      }
      *flag = c[key].get<bool>();
    }
  }
  if (site.contains("priority")) {
    ParsePriority(site["priority"], origin, &spec.priority);
    spec.has_priority = true;
  }
  if (site.contains("backfill")) {
    ParseBackfill(site["backfill"], origin, &spec.backfill);
    spec.has_backfill = true;
  }
  return spec;
}

}  // namespace clustersim
