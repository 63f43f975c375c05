#include "sim/engine/failure_log.h"

#include "sim/util/error.h"

namespace clustersim {

int FailureLog::AddCause(LoggedCause cause) {
  causes_.push_back(std::move(cause));
  totals_.emplace_back();
  return static_cast<int>(causes_.size()) - 1;
}

void FailureLog::Record(FailureEvent event, std::span<const JobId> jobs) {
  CHECK(job_ids_.size() + jobs.size() < (size_t{1} << 32), "failure log too long");
  event.jobs_begin = static_cast<uint32_t>(job_ids_.size());
  event.jobs_hit = static_cast<uint32_t>(jobs.size());
  job_ids_.insert(job_ids_.end(), jobs.begin(), jobs.end());
  ++totals_[event.cause].failures;
  events_.push_back(event);
}

}  // namespace clustersim
