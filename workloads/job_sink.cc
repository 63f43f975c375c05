#include "workloads/job_sink.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>

#include "sim/engine/priority_class.h"
#include "sim/util/error.h"

namespace clustersim {
namespace {

// Submission order: relative submit time, then the record's line, then arrival (stable sorts).
bool SubmittedBefore(const Job& a, const Job& b) {
  if (a.submit_time != b.submit_time) return a.submit_time < b.submit_time;
  return a.line < b.line;
}

std::string MapGpuTypes(const std::string& types,
                        const std::map<std::string, std::string>& gpu_type_map) {
  std::string mapped;
  std::stringstream names(types);
  std::string name;
  while (std::getline(names, name, '|')) {
    auto it = gpu_type_map.find(name);
    mapped += (mapped.empty() ? "" : "|") + (it == gpu_type_map.end() ? name : it->second);
  }
  return mapped;
}

}  // namespace

bool TraceFilter::IsIdentity() const {
  return !HasWindow() && vcs.empty() && users.empty() && statuses.empty() && first_n < 0 &&
         load_factor == 1.0 && gpu_type_map.empty() && !submit_is_start && !drop_host_demands &&
         priority_map.empty() && inflate == 0;
}

std::string TraceFilter::ToJson() const {
  nlohmann::json j = nlohmann::json::object();
  if (!std::isinf(window_start)) j["window_start"] = window_start;
  if (!std::isinf(window_end)) j["window_end"] = window_end;
  if (!vcs.empty()) j["vc"] = vcs;
  if (!users.empty()) j["user"] = users;
  if (!statuses.empty()) j["status"] = statuses;
  if (first_n >= 0) j["first"] = first_n;
  if (load_factor != 1.0) j["load_factor"] = load_factor;
  if (!gpu_type_map.empty()) j["map_gpu"] = gpu_type_map;
  if (submit_is_start) j["submit_is_start"] = true;
  if (drop_host_demands) j["no_host_demands"] = true;
  if (!priority_map.empty()) j["priority_map"] = priority_map;
  if (inflate > 0) j["inflate"] = inflate;
  // Names come from the command line as bytes: one that is not UTF-8 (a Latin-1 user name) must
  // not stop the run, so invalid bytes are recorded as U+FFFD.
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void TraceFilter::Validate() const {
  if (!(load_factor > 0) || !std::isfinite(load_factor)) {
    throw InputError("--load-factor: expected a factor > 0 (2 = twice the arrival rate)");
  }
  if (!(window_end > window_start)) throw InputError("--window: the end must be after the start");
  if (!(inflate >= 0) || !std::isfinite(inflate)) {
    throw InputError("--inflate: expected a factor > 0 (1.3 = 130 % of the cluster's GPUs)");
  }
}

JobSink::JobSink(const TraceFilter& filter, double origin)
    : filter_(filter), origin_(origin), origin_known_(!std::isnan(origin)) {
  filter_.Validate();
  CHECK(origin_known_ || !filter_.HasWindow(), "a time window needs the trace's origin");
}

void JobSink::ReserveHint(size_t records) {
  if (filter_.IsIdentity()) kept_.reserve(records);
}

void JobSink::Add(Job&& job, std::span<const RecordedAttempt> attempts,
                  const JobConstraints* constraints) {
  ++counts_.before;
  earliest_ = std::min(earliest_, job.submit_time);
  if (origin_known_) {
    const double t = job.submit_time - origin_;
    if (t < filter_.window_start || t >= filter_.window_end) {
      ++counts_.outside_window;
      return;
    }
  }
  if (!filter_.vcs.empty() && !filter_.vcs.count(job.vc.str())) {
    ++counts_.other_vc;
  } else if (!filter_.users.empty() && !filter_.users.count(job.user.str())) {
    ++counts_.other_user;
  } else if (!filter_.statuses.empty() && !filter_.statuses.count(job.trace_status.str())) {
    ++counts_.other_status;
  } else {
    if (!attempts.empty()) {
      CHECK(attempts_.size() + attempts.size() < (size_t{1} << 32), "too many recorded attempts");
      job.recorded_attempt_begin = static_cast<uint32_t>(attempts_.size());
      job.recorded_attempt_count = static_cast<uint32_t>(attempts.size());
      attempts_.insert(attempts_.end(), attempts.begin(), attempts.end());
    } else {
      job.recorded_attempt_count = 0;
    }
    job.constraints = 0;
    if (constraints != nullptr) {
      CHECK(constraints_.size() < (size_t{1} << 32) - 1, "too many jobs with constraints");
      constraints_.push_back(*constraints);
      job.constraints = static_cast<uint32_t>(constraints_.size());
    }
    any_priority_class_ = any_priority_class_ || !job.priority_class.empty();
    kept_.push_back(std::move(job));
    max_held_ = std::max(max_held_, kept_.size());
    // Keep at most twice first_n: trimming then costs O(log n) per job, amortized.
    if (filter_.first_n >= 0 &&
        kept_.size() >= 2 * static_cast<size_t>(std::max<int64_t>(filter_.first_n, 1))) {
      TrimToFirstN();
    }
  }
}

void JobSink::TrimToFirstN() {
  // Relative and absolute times order alike: the origin is one constant for every job.
  if (!std::is_sorted(kept_.begin(), kept_.end(), SubmittedBefore)) {
    std::stable_sort(kept_.begin(), kept_.end(), SubmittedBefore);
  }
  const size_t n = static_cast<size_t>(filter_.first_n);
  if (kept_.size() > n) {
    counts_.beyond_first_n += static_cast<int64_t>(kept_.size() - n);
    kept_.erase(kept_.begin() + static_cast<std::ptrdiff_t>(n), kept_.end());
  }
}

std::vector<Job> JobSink::Finish(FilterCounts* counts) {
  const double origin = origin_known_ ? origin_ : (kept_.empty() ? 0.0 : earliest_);
  if (unix_clock_) unix_origin_ = origin;
  if (origin != 0) {
    // NaN (not recorded) stays NaN.
    for (Job& job : kept_) {
      job.submit_time -= origin;
      job.recorded_start -= origin;
      job.recorded_end -= origin;
    }
    for (RecordedAttempt& a : attempts_) {
      a.start -= origin;
      a.end -= origin;
    }
  }
  if (filter_.first_n >= 0) {
    TrimToFirstN();
  } else if (!std::is_sorted(kept_.begin(), kept_.end(), SubmittedBefore)) {
    std::stable_sort(kept_.begin(), kept_.end(), SubmittedBefore);
  }
  if (!attempts_.empty()) {
    // In job order, without the attempts of jobs trimmed by --first.
    std::vector<RecordedAttempt> ordered;
    for (Job& job : kept_) {
      const uint32_t begin = job.recorded_attempt_begin;
      job.recorded_attempt_begin = static_cast<uint32_t>(ordered.size());
      ordered.insert(ordered.end(), attempts_.begin() + begin,
                     attempts_.begin() + begin + job.recorded_attempt_count);
    }
    attempts_ = std::move(ordered);
  }
  if (filter_.submit_is_start) {
    for (Job& job : kept_) {
      if (job.has_recorded_start()) continue;
      job.recorded_start = job.submit_time;
      if (!job.has_recorded_end()) job.recorded_end = job.submit_time + job.duration;
    }
  }
  if (filter_.load_factor != 1.0 && !kept_.empty()) {
    const double first = kept_.front().submit_time;
    for (Job& job : kept_)
      job.submit_time = first + (job.submit_time - first) / filter_.load_factor;
  }
  if (any_priority_class_) {  // else a pass over every job for nothing
    for (Job& job : kept_) {
      if (job.priority_class.empty()) continue;
      job.priority = PriorityLevelOf(job.priority_class.str(), filter_.priority_map).value_or(0);
    }
  }
  if (!filter_.gpu_type_map.empty()) {
    for (Job& job : kept_) {
      if (!job.gpu_type.empty()) job.gpu_type = MapGpuTypes(job.gpu_type.str(), filter_.gpu_type_map);
    }
  }
  if (filter_.drop_host_demands) {
    for (Job& job : kept_) job.cpu_milli = job.memory_mib = 0;
  }
  counts_.kept = static_cast<int64_t>(kept_.size());
  if (counts) *counts = counts_;
  return std::move(kept_);
}

}  // namespace clustersim
