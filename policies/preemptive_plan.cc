#include "policies/preemptive_plan.h"

#include <algorithm>

namespace clustersim {

void PreemptivePlanner::SetMark(JobId id, Mark mark) {
  if (static_cast<size_t>(id) >= marks_.size()) {
    marks_.resize(std::max<size_t>(static_cast<size_t>(id) + 1, 2 * marks_.size()), kPinned);
  }
  if (marks_[id] == kPinned && mark != kPinned) marked_.push_back(id);
  marks_[id] = mark;
}

const Resources& PreemptivePlanner::State() const {
  return planning_ ? *scratch_ : context_->resources();
}

bool PreemptivePlanner::Place(JobId id, Allocation* out) const {
  return context_->placement().Find(State(), context_->active(id).request, out);
}

void PreemptivePlanner::Run(SchedulingContext& context, RunnableOrder& order,
                            PassOutcome* outcome) {
  context_ = &context;
  order_ = &order;
  outcome_ = outcome;
  outcome->Clear();
  planning_ = false;
  evicted_.clear();
  to_preempt_.clear();
  to_start_.clear();
  cannot_fit_.clear();

  // Merge the queued lists and the evicted running jobs (each reconsidered at its own place in
  // the order) into one sequence in priority order.
  heads_.resize(order.QueuedLists());
  for (int list = 0; list < order.QueuedLists(); ++list) heads_[list] = order.FirstQueued(list);
  while (true) {
    int best = -1;
    for (int list = 0; list < static_cast<int>(heads_.size()); ++list) {
      if (heads_[list] != kNoJob && (best < 0 || order.Before(heads_[list], heads_[best]))) {
        best = list;
      }
    }
    if (!evicted_.empty() && (best < 0 || order.Before(evicted_.back(), heads_[best]))) {
      const JobId id = evicted_.back();
      evicted_.pop_back();
      SettleEvicted(id);
      continue;
    }
    if (best < 0) break;
    const JobId id = heads_[best];
    // Nothing free and nobody left to evict: no later queued job can start either (under host
    // limits a CPU-only job still may: it needs no GPU).
    if (evicted_.empty() && !State().AnyGpuRoom() && !State().host_limited() &&
        !IsPinnedJobBehind(id)) {
      break;
    }
    Allocation allocation;
    if (!IsKnownNotToFit(id) && (Place(id, &allocation) || MakeRoom(id, &allocation))) {
      heads_[best] = order.NextQueued(best);
      StartOrDefer(id, std::move(allocation));
    } else {
      heads_[best] = kNoJob;  // later jobs of this shape cannot fit either
    }
  }

  for (JobId id : to_preempt_) context.Preempt(id);
  for (auto& [id, allocation] : to_start_) context.Start(id, std::move(allocation));
  for (JobId id : marked_) marks_[id] = kPinned;
  marked_.clear();
  context_ = nullptr;
  order_ = nullptr;
  outcome_ = nullptr;
}

void PreemptivePlanner::StartOrDefer(JobId id, Allocation allocation) {
  outcome_->started.push_back(id);
  if (!planning_) {
    context_->Start(id, std::move(allocation));
    return;
  }
  TakeAllocation(*scratch_, context_->active(id).request, allocation);
  to_start_.emplace_back(id, std::move(allocation));
}

bool PreemptivePlanner::IsPinnedJobBehind(JobId id) {
  for (JobId r = order_->LowestRunning(); r != kNoJob && order_->Before(id, r);
       r = order_->NextHigherRunning()) {
    if (MarkOf(r) == kPinned) return true;
  }
  return false;
}

void PreemptivePlanner::AddEvicted(JobId id) {
  // Lowest priority first, so the next one to reconsider is at the back.
  auto it = std::lower_bound(evicted_.begin(), evicted_.end(), id,
                             [this](JobId a, JobId b) { return order_->Before(b, a); });
  evicted_.insert(it, id);
}

bool PreemptivePlanner::IsKnownNotToFit(JobId id) const {
  // What is left for a job only shrinks along the order, so a shape that did not fit earlier in
  // the pass does not fit now.
  const RequestShape shape = ShapeOf(context_->active(id).request);
  return std::find(cannot_fit_.begin(), cannot_fit_.end(), shape) != cannot_fit_.end();
}

bool PreemptivePlanner::MakeRoom(JobId id, Allocation* out) {
  const PlacementRequest& request = context_->active(id).request;
  const RequestShape shape = ShapeOf(request);
  if (IsKnownNotToFit(id)) return false;

  // Necessary condition, cheap: enough GPUs of allowed types among the free ones and those of
  // lower-priority pinned jobs.
  const Resources& state = State();
  int available = 0;
  for (int type : context_->cluster().gpu_types()) {
    if (request.AllowsType(type)) available += state.free_of_type(type);
  }
  for (JobId r = order_->LowestRunning();
       r != kNoJob && available < request.gpus && order_->Before(id, r);
       r = order_->NextHigherRunning()) {
    const Allocation& held = context_->active(r).allocation;
    if (MarkOf(r) == kPinned && request.AllowsType(held.gpu_type)) {
      available += static_cast<int>(held.gpus.size());
    }
  }
  if (available < request.gpus) {
    cannot_fit_.push_back(shape);
    return false;
  }

  if (!planning_) {
    if (scratch_) {
      *scratch_ = context_->resources();
    } else {
      scratch_.emplace(context_->resources());
    }
    planning_ = true;
  }
  // Evict lower-priority pinned jobs, lowest first, until the job fits.
  trial_.clear();
  bool bound_checked = false;
  for (JobId r = order_->LowestRunning(); r != kNoJob && order_->Before(id, r);
       r = order_->NextHigherRunning()) {
    const Allocation& held = context_->active(r).allocation;
    if (MarkOf(r) != kPinned || !request.AllowsType(held.gpu_type)) continue;
    GiveBackAllocation(*scratch_, context_->active(r).request, held);
    SetMark(r, kEvicted);
    trial_.push_back(r);
    if (context_->placement().Find(*scratch_, request, out)) {
      for (JobId t : trial_) AddEvicted(t);
      return true;
    }
    // One eviction was not enough (the common success needs one): before evicting more, ask
    // whether the job fits even around the higher-priority jobs that were running (the policy's
    // bound, a necessary condition); a failed trial would otherwise touch every job behind it.
    if (!bound_checked) {
      bound_checked = true;
      // (The bounds count GPUs only: a CPU-only job is never refused by one.)
      const Resources* bound = context_->run(id).state == JobState::kQueued && !IsCpuOnly(request)
                                   ? order_->RoomBound(id)
                                   : nullptr;
      if (bound && !context_->placement().Find(*bound, request, out)) break;
    }
  }
  // It does not fit in everything lower-priority jobs hold: undo.
  for (JobId t : trial_) {
    const ActiveRun& live = context_->active(t);
    TakeAllocation(*scratch_, live.request, live.allocation);
    SetMark(t, kPinned);
  }
  cannot_fit_.push_back(shape);
  return false;
}

void PreemptivePlanner::SettleEvicted(JobId id) {
  SetMark(id, kSettled);
  const ActiveRun& live = context_->active(id);
  // Its anti-affinity rule too (docs/spreading.md): a job of its group placed since may now
  // hold its domain.
  const SpreadRule& spread = scratch_->spread_rule(live.request.constraint);
  bool spread_allows =
      live.allocation.node < 0 || scratch_->SpreadAllowsNode(spread, live.allocation.node);
  for (size_t i = 0; i < live.allocation.gpus.size() && spread_allows; ++i) {
    spread_allows =
        scratch_->SpreadAllowsNode(spread, scratch_->cluster().NodeOfGpu(live.allocation.gpus[i]));
  }
  if (spread_allows && AllocationFits(*scratch_, live.request.host, live.allocation)) {
    // The job that evicted it went elsewhere: it keeps running where it is.
    TakeAllocation(*scratch_, live.request, live.allocation);
    return;
  }
  to_preempt_.push_back(id);
  order_->OnLost(id);
  Allocation allocation;
  if (Place(id, &allocation) || MakeRoom(id, &allocation)) {
    outcome_->migrated.push_back(id);
    TakeAllocation(*scratch_, live.request, allocation);
    to_start_.emplace_back(id, std::move(allocation));
  } else {
    outcome_->preempted.push_back(id);
  }
}

}  // namespace clustersim
