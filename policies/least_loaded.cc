// least-loaded: dynamic load balancing across GPU types by expected finish time
// (docs/resources.md). Each arriving job is sent to the GPU type where it is expected to finish
// first: now + (the type's backlog) / (its working GPUs) + the job's own run time there, where the
// backlog is the GPU-seconds of work queued for the type plus the GPU-seconds its running jobs
// still need (each from its expected end), and the run time is the job's remaining work / its
// rate on the type (SchedulingContext::TypeRate; use the hardware runtime model, under which
// types differ). Ties go to the type listed first. Each type serves its own queue first come,
// first served with head-of-line blocking, placing with the run's placement restricted to the
// type. A job a failure sends back to the queue is dispatched again. Non-preemptive. CPU-only jobs
// (no GPUs; docs/resources.md#cpu-only-jobs) have no rate on any type: they wait in a queue of
// their own, served first come, first served, wherever the run's placement finds room.
// Parameters: none.
#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <vector>

#include "policies/registry.h"
#include "policies/wait_statements.h"
#include "sim/util/error.h"

namespace clustersim {
namespace {

class LeastLoaded final : public Policy {
 public:
  bool PlacesMig() const override { return false; }  // docs/mig.md
  void OnArrival(SchedulingContext& context, JobId id) override { Dispatch(context, id); }
  void OnCompletion(SchedulingContext& /*context*/, JobId id) override { ForgetRunning(id); }
  void OnRequeue(SchedulingContext& context, JobId id) override {
    ForgetRunning(id);
    Dispatch(context, id);
  }

  void Schedule(SchedulingContext& context) override {
    while (!cpu_only_.empty()) {
      Allocation allocation;
      if (!context.TryPlace(*cpu_only_.begin(), &allocation)) break;
      context.Start(*cpu_only_.begin(), std::move(allocation));
      cpu_only_.erase(cpu_only_.begin());
    }
    for (size_t s = 0; s < queues_.size(); ++s) {
      while (!queues_[s].empty()) {
        const JobId id = *queues_[s].begin();
        const PlacementRequest request = OnType(context.active(id).request, types_[s]);
        Allocation allocation;
        if (!context.placement().Find(context.resources(), request, &allocation)) {
          // The type's head waits for room on its type; the jobs behind it, behind it.
          waits_.State(context, id,
                       ClassifyNoFit(context.cluster(), context.placement(), context.resources(),
                                     request, context.failed_gpus())
                           .value_or(WaitReason::kCapacity));
          break;
        }
        queues_[s].erase(queues_[s].begin());
        queued_work_[s] -= queued_.at(id);
        queued_.erase(id);
        context.Start(id, std::move(allocation));
        const ActiveRun& live = context.active(id);
        const double gpus = static_cast<double>(live.allocation.gpus.size());
        const double end = context.now() + live.overhead_left + live.work_left / live.rate;
        running_[id] = Running{static_cast<int>(s), gpus, end};
        running_gpus_[s] += gpus;
        running_gpu_ends_[s] += gpus * end;
      }
    }
    waits_.EndPass(context);
  }

 private:
  WaitStatements waits_;  // the blocked heads of the types' queues (policies/wait_statements.h)
  struct Running {
    int slot;
    double gpus;
    double end;  // expected end, seconds
  };

  void Setup(const SchedulingContext& context) {
    if (!types_.empty()) return;
    types_ = context.cluster().gpu_types();
    queues_.assign(types_.size(), {});
    queued_work_.assign(types_.size(), 0.0);
    running_gpus_.assign(types_.size(), 0.0);
    running_gpu_ends_.assign(types_.size(), 0.0);
  }

  void Dispatch(SchedulingContext& context, JobId id) {
    Setup(context);
    if (IsCpuOnly(context.active(id).request)) {
      cpu_only_.insert(id);
      return;
    }
    const Cluster& cluster = context.cluster();
    std::vector<int> working(types_.size());
    for (size_t s = 0; s < types_.size(); ++s) working[s] = cluster.GpusOfType(types_[s]);
    for (int g : context.failed_gpus()) {
      const int type = cluster.node(cluster.NodeOfGpu(g)).gpu_type;
      for (size_t s = 0; s < types_.size(); ++s) working[s] -= types_[s] == type;
    }
    const ActiveRun& live = context.active(id);
    const double gpus = std::max(1, live.request.gpus);
    int best = -1;
    double best_finish = std::numeric_limits<double>::infinity();
    double best_work = 0;
    for (size_t s = 0; s < types_.size(); ++s) {
      const double rate = context.TypeRate(id, types_[s]);
      if (!(rate > 0) || working[s] <= 0) continue;
      const double running = std::max(0.0, running_gpu_ends_[s] - context.now() * running_gpus_[s]);
      const double seconds = live.work_left / rate;
      const double finish = (queued_work_[s] + running) / working[s] + seconds;
      if (finish < best_finish) {
        best = static_cast<int>(s);
        best_finish = finish;
        best_work = gpus * seconds;
      }
    }
    // A job that fits no working type waits on the first type it may use (its GPUs may return).
    if (best < 0) {
      for (size_t s = 0; s < types_.size() && best < 0; ++s) {
        if (context.TypeRate(id, types_[s]) > 0) best = static_cast<int>(s);
      }
      CHECK(best >= 0, "least-loaded: a queued job fits no GPU type");
    }
    queues_[best].insert(id);
    queued_[id] = best_work;
    queued_work_[best] += best_work;
  }

  void ForgetRunning(JobId id) {
    auto it = running_.find(id);
    if (it == running_.end()) return;
    running_gpus_[it->second.slot] -= it->second.gpus;
    running_gpu_ends_[it->second.slot] -= it->second.gpus * it->second.end;
    running_.erase(it);
  }

  std::vector<int> types_;                // present catalog types, listed order (slots)
  std::vector<std::set<JobId>> queues_;   // per slot, in submission order
  std::vector<double> queued_work_;       // per slot: GPU-seconds queued
  std::map<JobId, double> queued_;        // queued job -> its GPU-seconds
  std::vector<double> running_gpus_;      // per slot: sum of GPUs of running jobs
  std::vector<double> running_gpu_ends_;  // per slot: sum of GPUs x expected end
  std::map<JobId, Running> running_;
  std::set<JobId> cpu_only_;  // queued CPU-only jobs, in submission order
};

}  // namespace
}  // namespace clustersim

CLUSTERSIM_REGISTER_POLICY(least_loaded, "least-loaded",
                           "dispatch each job to the GPU type where it is expected to finish "
                           "first (backlog / GPUs + its run time there); FCFS per type",
                           "", [](const clustersim::Params&) {
                             return std::make_unique<clustersim::LeastLoaded>();
                           });
