#include "workloads/transforms.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "sim/engine/priority_class.h"
#include "sim/engine/resources.h"
#include "sim/engine/summary.h"
#include "sim/util/duration.h"
#include "sim/util/error.h"
#include "sim/util/random.h"
#include "sim/util/temporary_files.h"

namespace clustersim {
namespace {

std::string Lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

bool KnownStatus(const std::string& status) {
  std::string s = status;
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  static const char* kKnown[] = {"",         "pass",      "completed", "succeeded", "success",
                                 "killed",   "failed",    "cancelled", "canceled",  "timeout",
                                 "node_fail", "terminated", "running", "pending",   "out_of_memory",
                                 "preempted", "finished", "0",         "1",         "5"};
  for (const char* k : kKnown) {
    if (s == k) return true;
  }
  return false;
}

// Appends `value` as one CSV field, quoted when the native reader would otherwise split or trim
// it (a comma, a quote, a carriage return, blanks at either end). REQUIRES: no '\n' (the native
// format is read line by line; WriteNativeCsv checks).
void AppendField(const std::string& value, std::string* out) {
  const bool blank_edge = !value.empty() && (value.front() == ' ' || value.front() == '\t' ||
                                             value.back() == ' ' || value.back() == '\t');
  if (!blank_edge && value.find_first_of(",\"\r") == std::string::npos) {
    *out += value;
    return;
  }
  *out += '"';
  for (char c : value) {
    if (c == '"') *out += '"';
    *out += c;
  }
  *out += '"';
}

void AppendNumber(double value, std::string* out) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);  // shortest exact
  out->append(buffer, result.ptr);
}

}  // namespace

void ParseWindow(const std::string& text, TraceFilter* filter) {
  const auto colon = text.find(':');
  if (colon == std::string::npos) {
    throw InputError("--window " + text +
                     ": expected START:END, durations from the trace's start (either may be "
                     "empty): 0:3600, 2d:3d");
  }
  const std::string start = text.substr(0, colon);
  const std::string end = text.substr(colon + 1);
  if (!start.empty()) filter->window_start = ParseDuration(start, "--window");
  if (!end.empty()) filter->window_end = ParseDuration(end, "--window");
}

std::set<std::string> ParseList(const std::string& text) {
  std::set<std::string> out;
  std::stringstream items(text);
  std::string item;
  while (std::getline(items, item, ',')) {
    if (!item.empty()) out.insert(item);
  }
  return out;
}

std::map<std::string, std::string> ParseGpuMap(const std::string& text) {
  std::map<std::string, std::string> out;
  std::stringstream items(text);
  std::string item;
  while (std::getline(items, item, ',')) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size()) {
      throw InputError("--map-gpu " + text + ": expected OLD=NEW[,OLD=NEW...]");
    }
    out[item.substr(0, eq)] = item.substr(eq + 1);
  }
  return out;
}

size_t InflateTrace(Trace* trace, double factor, int64_t capacity_milli, uint64_t seed) {
  CHECK(factor > 0 && capacity_milli > 0, "InflateTrace: factor and capacity must be > 0");
  std::vector<Job>& jobs = trace->jobs;
  int64_t total = 0;
  for (const Job& job : jobs) total += job.DemandMilli();
  if (total <= 0) {
    throw InputError(trace->path, 0, 0, "--inflate: no job of the trace requests GPUs");
  }
  const double target = factor * static_cast<double>(capacity_milli);
  std::mt19937_64 rng(seed);
  // The trace's own jobs in a random order first, then the copies after them in draw order: the
  // artifact shuffles its pods before it tunes the workload, and appends what it draws.
  for (size_t i = jobs.size(); i > 1; --i) std::swap(jobs[i - 1], jobs[UniformBelow(rng, i)]);
  if (static_cast<double>(total) < target) {
    const size_t originals = jobs.size();
    for (int64_t k = 0;; ++k) {
      const Job& drawn = jobs[UniformBelow(rng, originals)];
      const int64_t demand = drawn.DemandMilli();
      if (static_cast<double>(total + demand) > target) break;
      Job copy = drawn;
      copy.id += "-inflated-" + std::to_string(k);
      jobs.push_back(std::move(copy));
      total += demand;
    }
  } else {
    while (static_cast<double>(total) > target) {
      const size_t victim = UniformBelow(rng, jobs.size());
      total -= jobs[victim].DemandMilli();
      jobs.erase(jobs.begin() + static_cast<std::ptrdiff_t>(victim));
    }
  }
  for (size_t i = 0; i < jobs.size(); ++i) {
    Job& job = jobs[i];
    job.submit_time = static_cast<double>(i);
    job.recorded_start = job.recorded_end = kNotRecorded;
    job.recorded_attempt_begin = job.recorded_attempt_count = 0;
  }
  trace->recorded_attempts.clear();
  return jobs.size();
}

FilterCounts ApplyFilter(const TraceFilter& filter, Trace* trace) {
  if (filter.IsIdentity()) {
    const int64_t n = static_cast<int64_t>(trace->jobs.size());
    return FilterCounts{.before = n, .kept = n};
  }
  JobSink sink(filter, 0.0);
  for (Job& job : trace->jobs) {
    const std::span<const RecordedAttempt> attempts(
        trace->recorded_attempts.data() + job.recorded_attempt_begin, job.recorded_attempt_count);
    const JobConstraints* constraints = trace->ConstraintsOf(job);
    sink.Add(std::move(job), attempts, constraints);
  }
  FilterCounts counts;
  trace->jobs = sink.Finish(&counts);
  trace->recorded_attempts = sink.TakeAttempts();
  trace->constraints = sink.TakeConstraints();
  return counts;
}

std::string SanityReport::ToText() const {
  if (items.empty()) return "sanity report: no problems found\n";
  std::string out = "sanity report:\n";
  for (const SanityItem& item : items) {
    out += "  " + std::to_string(item.count) + " " + item.what;
    if (!item.first_lines.empty()) {
      out += " (first lines:";
      for (int64_t line : item.first_lines) out += " " + std::to_string(line);
      out += ")";
    }
    out += "\n";
  }
  return out;
}

SanityReport CheckTraceSanity(const Trace& trace, const Cluster* cluster, bool file_submissions) {
  SanityItem larger{"jobs larger than the cluster (they will be rejected)", 0, {}};
  // A job of 0 GPUs is a CPU-only job where the run limits the CPUs or memory it states
  // (docs/resources.md#cpu-only-jobs); the others are rejected.
  SanityItem zero_gpus{cluster ? "jobs requesting 0 GPUs and no CPUs or memory the cluster declares "
                                 "(they will be rejected)"
                               : "jobs requesting 0 GPUs (rejected unless they state CPUs or "
                                 "memory the cluster declares: CPU-only jobs)",
                       0,
                       {}};
  bool cpus_declared = false;
  bool memory_declared = false;
  // A site's partition may count processors: a job of p of them takes ceil(p / its
  // processors_per_gpu) GPUs (docs/cluster.md#site-model), so only a job larger than the cluster
  // at the largest such ratio is surely larger.
  int64_t largest = cluster ? cluster->total_gpus() : 0;
  if (cluster) {
    int per_gpu = 1;
    for (const SitePartition& part : cluster->spec().site.partitions) {
      per_gpu = std::max(per_gpu, part.processors_per_gpu);
    }
    largest *= per_gpu;
  }
  if (cluster) {
    for (const Node& node : cluster->nodes()) {
      cpus_declared = cpus_declared || NodeCpuMilli(node) > 0;
      memory_declared = memory_declared || NodeMemoryMib(node) > 0;
    }
  }
  SanityItem zero_duration{"jobs of zero duration", 0, {}};
  SanityItem unsorted{"rows submitted earlier than a row above them (sorted before the run)", 0,
                      {}};
  SanityItem duplicates{"duplicate job ids", 0, {}};
  SanityItem unknown_status{"unknown trace statuses", 0, {}};
  SanityItem started_early{"recorded starts before the submission (kept as recorded)", 0, {}};
  SanityItem ended_early{"recorded ends before the recorded start (kept as recorded)", 0, {}};
  auto note = [](SanityItem& item, int64_t line) {
    if (item.first_lines.size() < kSanityLines) item.first_lines.push_back(line);
    ++item.count;
  };
  // In file order, for unsorted rows and first-line reporting. A trace whose file was in
  // submission order is still in line order: then the jobs are visited as they are, without a
  // list of ten million pointers to build.
  auto line_order = [](const Job* a, const Job* b) { return a->line < b->line; };
  std::vector<const Job*> by_line;
  if (!std::is_sorted(trace.jobs.begin(), trace.jobs.end(),
                      [](const Job& a, const Job& b) { return a.line < b.line; })) {
    by_line.reserve(trace.jobs.size());
    for (const Job& job : trace.jobs) by_line.push_back(&job);
    std::sort(by_line.begin(), by_line.end(), line_order);
  }
  auto in_line_order = [&](auto&& visit) {
    if (by_line.empty()) {
      for (const Job& job : trace.jobs) visit(&job);
    } else {
      for (const Job* job : by_line) visit(job);
    }
  };
  double latest = -std::numeric_limits<double>::infinity();
  std::map<std::string, int64_t> classes;  // priority classes: lower-case name -> jobs
  in_line_order([&](const Job* job) {
    if (cluster && job->gpus > largest) note(larger, job->line);
    const bool cpu_only = (cpus_declared && job->cpu_milli > 0) ||
                          (memory_declared && job->memory_mib > 0);
    if (job->gpus == 0 && !cpu_only) note(zero_gpus, job->line);
    if (job->duration == 0) note(zero_duration, job->line);
    if (file_submissions && job->submit_time < latest) note(unsorted, job->line);
    latest = std::max(latest, job->submit_time);
    if (!KnownStatus(job->trace_status.str())) note(unknown_status, job->line);
    if (job->recorded_start < job->submit_time) note(started_early, job->line);  // NaN: false
    if (job->recorded_end < job->recorded_start) note(ended_early, job->line);
    if (!job->priority_class.empty()) ++classes[Lower(job->priority_class.str())];
  });
  // Duplicate ids, unless the reader rejected them already: sort (hash, line) pairs, then confirm
  // equal hashes by comparing the ids (much cheaper than sorting the strings of a million-job
  // trace). Runs of equal hashes are tiny.
  if (!trace.ids_unique) {
    std::vector<std::pair<uint64_t, const Job*>> ids;
    ids.reserve(trace.jobs.size());
    in_line_order(
        [&](const Job* job) { ids.emplace_back(std::hash<std::string_view>()(job->id), job); });
    std::sort(ids.begin(), ids.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : a.second->line < b.second->line;
    });
    std::vector<int64_t> duplicate_lines;
    for (size_t k = 1; k < ids.size(); ++k) {
      for (size_t j = k; j-- > 0 && ids[j].first == ids[k].first;) {
        if (ids[j].second->id == ids[k].second->id) {
          duplicate_lines.push_back(ids[k].second->line);
          break;
        }
      }
    }
    std::sort(duplicate_lines.begin(), duplicate_lines.end());
    for (int64_t line : duplicate_lines) note(duplicates, line);
  }
  // Priority classes without a level (counted above): worth a warning only when the trace has
  // several classes (one class everywhere orders nothing, whatever its level).
  std::string unmapped_names;
  for (const auto& [name, jobs] : classes) {
    if (!PriorityLevelOf(name, trace.priority_map)) {
      unmapped_names += (unmapped_names.empty() ? "" : ", ") + name;
    }
  }
  SanityItem unmapped{
      "jobs of priority classes with no level in --priority-map or the built-in "
      "table, given level 0 (" +
          unmapped_names + ")",
      0,
      {}};
  if (classes.size() > 1 && !unmapped_names.empty()) {
    in_line_order([&](const Job* job) {
      if (!job->priority_class.empty() &&
          !PriorityLevelOf(job->priority_class.str(), trace.priority_map)) {
        note(unmapped, job->line);
      }
    });
  }
  std::string unused_names;
  int64_t unused_count = 0;
  for (const auto& [name, level] : trace.priority_map) {
    if (!classes.count(name)) {
      unused_names += (unused_names.empty() ? "" : ", ") + name;
      ++unused_count;
    }
  }
  SanityItem unused{"--priority-map classes that no job of the trace has (" + unused_names + ")",
                    unused_count,
                    {}};
  SanityReport report;
  for (SanityItem* item : {&larger, &zero_gpus, &zero_duration, &unsorted, &duplicates,
                           &unknown_status, &started_early, &ended_early, &unmapped, &unused}) {
    if (item->count > 0) report.items.push_back(std::move(*item));
  }
  return report;
}

TraceStats ComputeTraceStats(const Trace& trace) {
  TraceStats s;
  s.jobs = static_cast<int64_t>(trace.jobs.size());
  if (trace.jobs.empty()) return s;
  s.first_submit = trace.jobs.front().submit_time;
  s.last_submit = trace.jobs.back().submit_time;
  std::vector<double> durations;
  durations.reserve(trace.jobs.size());
  double total = 0;
  for (const Job& job : trace.jobs) {
    ++s.jobs_by_gpus[job.gpus];
    ++s.jobs_by_priority[job.priority][job.priority_class.str()];
    durations.push_back(job.duration);
    total += job.duration;
    s.gpu_hours += job.gpus * job.duration / 3600;
    s.recorded_starts += job.has_recorded_start();
    s.recorded_ends += job.has_recorded_end();
  }
  s.recorded_attempts = static_cast<int64_t>(trace.recorded_attempts.size());
  s.duration_mean = total / durations.size();
  s.duration_max = *std::max_element(durations.begin(), durations.end());
  s.duration_p50 = Percentile(durations, 0.50);
  s.duration_p90 = Percentile(durations, 0.90);
  s.duration_p99 = Percentile(durations, 0.99);
  const double span = s.last_submit - s.first_submit;
  if (span > 0) {
    s.arrivals_per_hour = (s.jobs - 1) / (span / 3600);
    s.offered_gpu_hours_per_day = s.gpu_hours / (span / 86400);
  }
  return s;
}

std::string FormatTraceStats(const TraceStats& s, int64_t cluster_gpus) {
  char line[256];
  std::string out;
  std::snprintf(line, sizeof line, "jobs            %lld\n", static_cast<long long>(s.jobs));
  out += line;
  std::snprintf(line, sizeof line, "submissions     %.0f s to %.0f s (span %.2f days)\n",
                s.first_submit, s.last_submit, (s.last_submit - s.first_submit) / 86400);
  out += line;
  std::snprintf(line, sizeof line, "arrival rate    %.2f jobs/hour\n", s.arrivals_per_hour);
  out += line;
  std::snprintf(line, sizeof line,
                "duration (s)    mean %.0f   p50 %.0f   p90 %.0f   p99 %.0f   max %.0f\n",
                s.duration_mean, s.duration_p50, s.duration_p90, s.duration_p99, s.duration_max);
  out += line;
  std::snprintf(line, sizeof line, "offered load    %.0f GPU-hours in all, %.1f GPU-hours/day\n",
                s.gpu_hours, s.offered_gpu_hours_per_day);
  out += line;
  if (cluster_gpus > 0) {
    if (s.offered_gpu_hours_per_day > 0) {
      std::snprintf(line, sizeof line,
                    "                %.3f of the cluster's %lld GPUs (GPU-hours demanded / "
                    "GPU-hours available over the span)\n",
                    s.offered_gpu_hours_per_day / (24.0 * static_cast<double>(cluster_gpus)),
                    static_cast<long long>(cluster_gpus));
    } else {
      std::snprintf(line, sizeof line,
                    "                - of the cluster's %lld GPUs (no submission span)\n",
                    static_cast<long long>(cluster_gpus));
    }
    out += line;
  }
  if (s.recorded_starts + s.recorded_ends > 0) {
    std::snprintf(line, sizeof line,
                  "recorded        %lld starts, %lld ends, %lld attempts (clustersim validate)\n",
                  static_cast<long long>(s.recorded_starts), static_cast<long long>(s.recorded_ends),
                  static_cast<long long>(s.recorded_attempts));
    out += line;
  }
  out += "GPUs per job    ";
  for (const auto& [gpus, count] : s.jobs_by_gpus) {
    std::snprintf(line, sizeof line, "%d: %lld (%.1f%%)  ", gpus, static_cast<long long>(count),
                  100.0 * count / std::max<int64_t>(1, s.jobs));
    out += line;
  }
  out += "\n";
  // A trace without classes (every job level 0, no class names) gets no priority line.
  const bool classless = s.jobs_by_priority.size() == 1 && s.jobs_by_priority.begin()->first == 0 &&
                         s.jobs_by_priority.begin()->second.size() == 1 &&
                         s.jobs_by_priority.begin()->second.begin()->first.empty();
  if (s.jobs_by_priority.empty() || classless) return out;
  // Highest level first: the order a priority policy serves them in.
  out += "priority        ";
  for (auto level = s.jobs_by_priority.rbegin(); level != s.jobs_by_priority.rend(); ++level) {
    int64_t count = 0;
    std::string names;
    for (const auto& [name, jobs] : level->second) {
      count += jobs;
      if (!name.empty()) names += (names.empty() ? "" : "|") + name;
    }
    // "2 high [LS]: 4647 (57.0%)": level, its built-in name, the trace's class names.
    out += std::to_string(level->first);
    if (const std::string label = PriorityLevelName(level->first); !label.empty()) {
      out += " " + label;
    }
    if (!names.empty()) out += " [" + names + "]";
    std::snprintf(line, sizeof line, ": %lld (%.1f%%)  ", static_cast<long long>(count),
                  100.0 * count / std::max<int64_t>(1, s.jobs));
    out += line;
  }
  out += "\n";
  return out;
}

void WriteNativeCsv(const Trace& trace, const std::string& path) {
  const std::string temporary = path + ".partial";
  const RemoveOnSignal remove_on_signal(temporary);
  std::FILE* file = std::fopen(temporary.c_str(), "wb");
  if (!file) throw InputError(path, 0, 0, "cannot write file");
  // The per-job training settings only when some job has them (older outputs stay as they were).
  bool settings = false;
  for (const Job& job : trace.jobs) {
    settings = settings || !job.precision.empty() || job.sequence_length > 0;
  }
  std::string chunk =
      "job_id,submit_time,gpus,duration,walltime,gpu_type,user,vc,priority,model,batch_size,"
      "status";
  if (settings) chunk += ",precision,sequence_length";
  // The recorded schedule's columns only when some job has one (attempts are not written).
  const bool recorded = std::any_of(trace.jobs.begin(), trace.jobs.end(), [](const Job& job) {
    return job.has_recorded_start() || job.has_recorded_end();
  });
  // The host-demand columns only when some job states one (older readers do not know them).
  const bool host = std::any_of(trace.jobs.begin(), trace.jobs.end(), [](const Job& job) {
    return job.cpu_milli > 0 || job.memory_mib > 0;
  });
  // Model parallelism only when some job states it.
  const bool parallel = std::any_of(trace.jobs.begin(), trace.jobs.end(), [](const Job& job) {
    return job.tensor_parallel > 0 || job.pipeline_parallel > 0;
  });
  chunk += recorded ? ",recorded_start,recorded_end" : "";
  chunk += host ? ",cpus,host_memory_gib" : "";
  chunk += parallel ? ",tp,pp" : "";
  // The constraint columns only when some job has constraints (docs/deadlines.md); a deadline is
  // written relative to the submission ("+seconds"), as the job holds it.
  const bool constrained = std::any_of(trace.jobs.begin(), trace.jobs.end(),
                                       [](const Job& job) { return job.constraints != 0; });
  chunk += constrained ? ",deadline,data_nodes,max_nodes" : "";
  // Anti-affinity columns (docs/spreading.md) only when some job names a group.
  const bool grouped = std::any_of(trace.jobs.begin(), trace.jobs.end(), [&](const Job& job) {
    const JobConstraints* c = trace.ConstraintsOf(job);
    return c != nullptr && !c->group.empty();
  });
  chunk += grouped ? ",group,spread" : "";
  // The MIG profile only when some job names one (docs/mig.md).
  const bool mig = std::any_of(trace.jobs.begin(), trace.jobs.end(),
                               [](const Job& job) { return job.mig_profile != 0; });
  chunk += mig ? ",mig_profile\n" : "\n";
  bool ok = true;
  for (const Job& job : trace.jobs) {
    const JobConstraints* constraints = trace.ConstraintsOf(job);
    const std::string& group = constraints != nullptr ? constraints->group.str() : job.id;
    for (const std::string* text : {&job.id, &job.gpu_type.str(), &job.user.str(), &job.vc.str(),
                                    &job.model.str(), &job.trace_status.str(), &group}) {
      if (text->find('\n') != std::string::npos) {
        std::fclose(file);
        std::error_code ignored;
        std::filesystem::remove(temporary, ignored);
        std::string id;
        for (char c : job.id) id += c == '\n' ? std::string("\\n") : std::string(1, c);
        throw InputError(trace.path, 0, 0,
                         "job \"" + id + "\" (record " + std::to_string(job.line) +
                             "): a text field (job_id, gpu_type, user, vc, model, status or "
                             "group) holds a line break, which the native CSV format (one job "
                             "per line) cannot hold");
      }
    }
    AppendField(job.id, &chunk);
    chunk += ',';
    AppendNumber(job.submit_time, &chunk);
    chunk += ',' + std::to_string(job.gpus) + ',';
    AppendNumber(job.duration, &chunk);
    chunk += ',';
    if (job.walltime >= 0) AppendNumber(job.walltime, &chunk);
    chunk += ',';
    AppendField(job.gpu_type.str(), &chunk);
    chunk += ',';
    AppendField(job.user.str(), &chunk);
    chunk += ',';
    AppendField(job.vc.str(), &chunk);
    chunk += ',' + std::to_string(job.priority) + ',';
    AppendField(job.model.str(), &chunk);
    chunk += ',';
    if (job.batch_size > 0) chunk += std::to_string(job.batch_size);
    chunk += ',';
    AppendField(job.trace_status.str(), &chunk);
    if (settings) {
      chunk += ',' + job.precision.str() + ',';
      if (job.sequence_length > 0) chunk += std::to_string(job.sequence_length);
    }
    if (recorded) {
      chunk += ',';
      if (job.has_recorded_start()) AppendNumber(job.recorded_start, &chunk);
      chunk += ',';
      if (job.has_recorded_end()) AppendNumber(job.recorded_end, &chunk);
    }
    if (host) {
      chunk += ',';
      if (job.cpu_milli > 0) AppendNumber(job.cpu_milli / 1000.0, &chunk);
      chunk += ',';
      if (job.memory_mib > 0) AppendNumber(job.memory_mib / 1024.0, &chunk);
    }
    if (parallel) {
      chunk += ',';
      if (job.tensor_parallel > 0) chunk += std::to_string(job.tensor_parallel);
      chunk += ',';
      if (job.pipeline_parallel > 0) chunk += std::to_string(job.pipeline_parallel);
    }
    if (constrained) {
      const JobConstraints* c = trace.ConstraintsOf(job);
      chunk += ',';
      if (c != nullptr && c->has_deadline()) {
        chunk += '+';
        AppendNumber(c->deadline, &chunk);
      }
      chunk += ',';
      if (c != nullptr) AppendField(c->data_nodes.str(), &chunk);
      chunk += ',';
      if (c != nullptr && c->max_nodes > 0) chunk += std::to_string(c->max_nodes);
    }
    if (grouped) {
      chunk += ',';
      if (constraints != nullptr && !constraints->group.empty()) {
        AppendField(constraints->group.str(), &chunk);
        chunk += ',';
        chunk += SpreadDomainName(constraints->spread);
      } else {
        chunk += ',';
      }
    }
    if (mig) {
      chunk += ',';
      AppendField(MigProfileName(job.mig_profile), &chunk);
    }
    chunk += '\n';
    if (chunk.size() > (1 << 20)) {
      ok = ok && std::fwrite(chunk.data(), 1, chunk.size(), file) == chunk.size();
      chunk.clear();
    }
  }
  ok = ok && std::fwrite(chunk.data(), 1, chunk.size(), file) == chunk.size();
  ok = std::fclose(file) == 0 && ok;
  std::error_code error;
  if (ok) std::filesystem::rename(temporary, path, error);
  if (!ok || error) {
    std::filesystem::remove(temporary, error);
    throw InputError(path, 0, 0, "cannot write file");
  }
}

void CheckSplitShare(double share) {
  if (!(share > 0 && share < 1)) {
    throw InputError("--split: expected the share of the jobs to calibrate on, in (0, 1)");
  }
}

double SplitTime(const Trace& trace, double share, const std::string& path) {
  CheckSplitShare(share);
  if (trace.jobs.size() < 2) {
    throw InputError(path, 0, 0, "--split needs at least two jobs to split into two parts");
  }
  size_t k = static_cast<size_t>(std::floor(share * trace.jobs.size()));
  k = std::clamp<size_t>(k, 1, trace.jobs.size() - 1);
  const double split = trace.jobs[k].submit_time;
  if (trace.jobs.front().submit_time >= split) {
    throw InputError(path, 0, 0,
                     "--split: every job is submitted at the split time; nothing to calibrate "
                     "on");
  }
  return split;
}

}  // namespace clustersim
