#include "python/python_policy.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

namespace py = pybind11;

namespace clustersim {

SchedulingContext& PolicyContext::get() const {
  if (context_ == nullptr) {
    throw std::runtime_error(
        "clustersim: a policy context is valid only inside the hook it was passed to");
  }
  return *context_;
}

int64_t PolicyContext::jobs_seen() const { return owner_->jobs_seen(); }

template <typename Verb>
void PolicyContext::Apply(Verb&& verb) {
  SchedulingContext& context = get();
  try {
    verb(context);
  } catch (const InternalError& e) {
    // The engine refuses an invalid decision before changing any state (Engine::PolicyBug);
    // other internal errors are bugs of clustersim and stay InternalError.
    const std::string message = e.what();
    if (message.rfind("policy " + owner_->name() + " made an invalid decision", 0) != 0) throw;
    owner_->NoteRefusal(message);
    throw PolicyDecisionError(message);
  }
}

void PolicyContext::Start(JobId id, Allocation allocation) {
  Apply([&](SchedulingContext& c) { c.Start(id, std::move(allocation)); });
}

void PolicyContext::Preempt(JobId id) {
  Apply([&](SchedulingContext& c) { c.Preempt(id); });
}

void PolicyContext::Resize(JobId id, Allocation allocation) {
  Apply([&](SchedulingContext& c) { c.Resize(id, std::move(allocation)); });
}

void PolicyContext::SetTimer(double time, JobId id, int tag) {
  Apply([&](SchedulingContext& c) { c.SetTimer(time, id, tag); });
}

namespace {
WaitReason ReasonNamed(const std::string& name) {
  const std::optional<WaitReason> reason = WaitReasonFromName(name);
  if (!reason) {
    throw InputError("unknown wait reason \"" + name + "\"; valid: " + WaitReasonNames());
  }
  return *reason;
}
}  // namespace

void PolicyContext::SetWaitReason(JobId id, const std::string& reason) {
  const WaitReason r = ReasonNamed(reason);
  Apply([&](SchedulingContext& c) { c.SetWaitReason(id, r); });
}

void PolicyContext::ClearWaitReason(JobId id) {
  Apply([&](SchedulingContext& c) { c.ClearWaitReason(id); });
}

void PolicyContext::SetGroupWaitReason(int group, const std::string& reason) {
  const WaitReason r = ReasonNamed(reason);
  Apply([&](SchedulingContext& c) { c.SetGroupWaitReason(group, r); });
}

Allocation PolicyContext::MakeAllocation(std::vector<int> gpus, int milli) const {
  const Cluster& cluster = get().cluster();
  Allocation allocation;
  if (!gpus.empty() && gpus[0] >= 0 && gpus[0] < cluster.total_gpus()) {
    allocation.gpu_type = cluster.node(cluster.NodeOfGpu(gpus[0])).gpu_type;
  }
  allocation.gpus = std::move(gpus);
  allocation.milli = milli;
  return allocation;
}

double PolicyContext::RemainingSeconds(JobId id) const {
  const SchedulingContext& context = get();
  const JobRun& run = context.run(id);
  if (run.active < 0) return run.state == JobState::kPending ? context.job(id).duration : 0.0;
  const ActiveRun& live = context.active(id);
  if (run.state != JobState::kRunning) return live.work_left;
  // As srtf's RemainingWork (policies/srtf.cc): the overhead is paid first, then work progresses
  // at the rate.
  const double ran = context.now() - live.last_start;
  const double overhead_paid = std::min(ran, live.overhead_left);
  const double work = std::max(0.0, live.work_left - (ran - overhead_paid) * live.rate);
  return (live.overhead_left - overhead_paid) + work / live.rate;
}

PythonPolicy::PythonPolicy(Hooks hooks, bool supports_shares, std::string name)
    : hooks_(std::move(hooks)),
      supports_shares_(supports_shares),
      name_(std::move(name)),
      context_(std::make_shared<PolicyContext>(this)),
      context_object_(py::cast(context_)) {}

PythonPolicy::~PythonPolicy() { context_->Bind(nullptr); }

template <typename... Args>
void PythonPolicy::Call(const py::object& hook, SchedulingContext& context, Args... args) {
  py::gil_scoped_acquire gil;
  SchedulingContext* outer = context_->bound();
  context_->Bind(&context);
  try {
    hook(context_object_, args...);
  } catch (...) {
    context_->Bind(outer);
    throw;
  }
  context_->Bind(outer);
  if (!refusal_.empty()) throw PolicyDecisionError(refusal_);
}

void PythonPolicy::Schedule(SchedulingContext& context) { Call(hooks_.schedule, context); }

void PythonPolicy::OnArrival(SchedulingContext& context, JobId id) {
  jobs_seen_ = std::max<int64_t>(jobs_seen_, int64_t{id} + 1);
  if (!hooks_.on_arrival.is_none()) Call(hooks_.on_arrival, context, id);
}

void PythonPolicy::OnCompletion(SchedulingContext& context, JobId id) {
  if (!hooks_.on_completion.is_none()) Call(hooks_.on_completion, context, id);
}

void PythonPolicy::OnTimer(SchedulingContext& context, JobId id, int tag) {
  if (!hooks_.on_timer.is_none()) Call(hooks_.on_timer, context, id, tag);
}

void PythonPolicy::OnRequeue(SchedulingContext& context, JobId id) {
  if (!hooks_.on_requeue.is_none()) Call(hooks_.on_requeue, context, id);
}

double PythonPolicy::RequestedWalltime(const Job& job) const {
  if (hooks_.requested_walltime.is_none()) return job.walltime;
  py::gil_scoped_acquire gil;
  const double seconds = hooks_.requested_walltime(job).cast<double>();
  return std::isnan(seconds) ? -1.0 : seconds;  // NaN: no wall time, as Job::walltime < 0
}

}  // namespace clustersim
