#include "policies/backfill.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <memory>

#include "policies/user_estimates.h"
#include "sim/engine/mig.h"
#include "sim/util/error.h"

namespace clustersim {

// ---- WalltimeRule ----

WalltimeRule WalltimeRule::FromParams(const Params& params) {
  const std::string value = params.String("walltime", "trace");
  WalltimeRule rule;
  if (value == "trace") {
    rule.source_ = Source::kTrace;
  } else if (value == "exact") {
    rule.source_ = Source::kExact;
  } else {
    double factor = 0;
    auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), factor);
    if (ec != std::errc() || ptr != value.data() + value.size() || !(factor > 0) ||
        !std::isfinite(factor)) {
      throw InputError("parameter walltime=" + value +
                       ": expected trace, exact or a positive factor of the duration");
    }
    rule.source_ = Source::kFactor;
    rule.factor_ = factor;
  }
  return rule;
}

void WalltimeRule::Prepare(const Trace& trace, uint64_t seed) {
  first_job_ = trace.jobs.data();
  estimates_.reset();
  description_.clear();
  switch (source_) {
    case Source::kExact:
      description_ = "exact: every job's true duration (walltime=exact)";
      return;
    case Source::kFactor: {
      char text[128];
      std::snprintf(text, sizeof text, "%g x each job's duration, also its kill limit (walltime=%g)",
                    factor_, factor_);
      description_ = text;
      return;
    }
    case Source::kTrace:
      break;
  }
  std::vector<double> runs;
  for (const Job& job : trace.jobs) {
    if (job.walltime >= 0) continue;
    if (!(job.duration <= kMaxModelledRunSeconds)) {
      throw InputError("job " + job.id + ": duration " + std::to_string(job.duration) +
                       " s is beyond what walltime=trace can model a user estimate for (at most "
                       "100 years, 3.16e9 s); give the job a walltime or use walltime=exact");
    }
    runs.push_back(job.duration);
  }
  const size_t with_walltime = trace.jobs.size() - runs.size();
  if (runs.empty()) {
    description_ = "the trace's wall times, also the kill limits (walltime=trace)";
    return;
  }
  const UserEstimates model = ModelUserEstimates(runs, seed);
  auto estimates = std::make_shared<std::vector<double>>(trace.jobs.size(), -1.0);
  size_t next = 0;
  for (size_t i = 0; i < trace.jobs.size(); ++i) {
    if (trace.jobs[i].walltime < 0) (*estimates)[i] = model.seconds[next++];
  }
  estimates_ = std::move(estimates);
  char text[320];
  std::snprintf(text, sizeof text,
                "modelled user estimates for %zu jobs without a wall time (Tsafrir, Etsion and "
                "Feitelson 2005; longest %lld h, seed %llu%s): planning only, never killed",
                runs.size(), static_cast<long long>(model.max_seconds / 3600),
                static_cast<unsigned long long>(seed),
                model.moved_to_max > 0
                    ? ("; " + std::to_string(model.moved_to_max) + " moved to the longest").c_str()
                    : "");
  description_ = text;
  if (with_walltime > 0) {
    description_ += "; the trace's wall times for the other " + std::to_string(with_walltime);
  }
  description_ += " (walltime=trace; walltime=exact plans with true durations)";
}

std::string WalltimeRule::Describe() const { return description_; }

double WalltimeRule::Modelled(const Job& job) const {
  if (!estimates_) return -1;
  const auto index = static_cast<size_t>(&job - first_job_);
  CHECK(&job >= first_job_ && index < estimates_->size(),
        "WalltimeRule: a job outside the trace it was prepared for");
  return (*estimates_)[index];
}

double WalltimeRule::Requested(const Job& job) const {
  switch (source_) {
    case Source::kTrace:
      return job.walltime;
    case Source::kExact:
      return -1;  // the true duration: nothing to kill
    case Source::kFactor:
      return factor_ * job.duration;
  }
  return -1;
}

double WalltimeRule::Planned(const Job& job) const {
  const double requested = Requested(job);
  if (requested >= 0) return requested;
  const double modelled = Modelled(job);
  return modelled >= 0 ? modelled : job.duration;
}

double WalltimeRule::EstimatedEnd(const SchedulingContext& context, JobId id) const {
  const JobRun& run = context.run(id);
  const ActiveRun& live = context.active(id);
  const double now = context.now();
  const Job& job = context.job(id);
  // The engine kills the job at a requested wall time (Engine::ScheduleFinish), so it never runs
  // longer; a modelled estimate is at least the duration, so it runs longer only where the
  // runtime model or a preemption makes it slower than its trace duration.
  const double requested = Requested(job);
  const double planned = requested >= 0 ? requested : Modelled(job);
  if (planned >= 0) return now + std::max(0.0, planned - run.run_seconds);
  // No estimate: the true end, computed as the engine does.
  return now + live.overhead_left + live.work_left / live.rate;
}

// ---- QueueIndex ----

void QueueIndex::MinTree::PushBack(double value) {
  if (size_ == leaves_) {
    const int grown = std::max(1, leaves_ * 2);
    std::vector<double> tree(2 * static_cast<size_t>(grown),
                             std::numeric_limits<double>::infinity());
    for (int i = 0; i < size_; ++i) tree[grown + i] = tree_[leaves_ + i];
    for (int node = grown - 1; node >= 1; --node) {
      tree[node] = std::min(tree[2 * node], tree[2 * node + 1]);
    }
    tree_ = std::move(tree);
    leaves_ = grown;
  }
  Set(size_++, value);
}

void QueueIndex::MinTree::Set(int position, double value) {
  int node = leaves_ + position;
  tree_[node] = value;
  for (node /= 2; node >= 1; node /= 2) {
    tree_[node] = std::min(tree_[2 * node], tree_[2 * node + 1]);
  }
}

int QueueIndex::MinTree::Descend(int node, int lo, int hi, int from, double limit) const {
  if (hi < from || tree_[node] > limit) return -1;
  if (lo == hi) return lo;
  const int mid = lo + (hi - lo) / 2;
  const int left = Descend(2 * node, lo, mid, from, limit);
  return left >= 0 ? left : Descend(2 * node + 1, mid + 1, hi, from, limit);
}

int QueueIndex::MinTree::FirstAtMost(double limit, int from) const {
  if (from >= size_) return -1;
  return Descend(1, 0, leaves_ - 1, from, limit);
}

void QueueIndex::Add(JobId id, int cls, double planned_seconds) {
  if (cls >= static_cast<int>(streams_.size())) {
    streams_.resize(cls + 1);
    cached_.resize(cls + 1);
    in_touched_.resize(cls + 1, 0);
    in_narrowed_.resize(cls + 1, 0);
  }
  Stream& stream = streams_[cls];
  stream.ids.push_back(id);
  stream.planned.PushBack(planned_seconds);
  ++stream.waiting;
  class_of_.emplace(id, cls);
  LowerTo(cls, id);
  ++walk_;
}

void QueueIndex::Readd(JobId id, int cls, double planned_seconds) {
  // Started jobs keep their place in the stream (at +infinity), so it only needs its value back.
  CHECK(cls < static_cast<int>(streams_.size()), "queue index: re-added job of an unknown class");
  Stream& stream = streams_[cls];
  const auto pos = std::lower_bound(stream.ids.begin(), stream.ids.end(), id);
  CHECK(pos != stream.ids.end() && *pos == id, "queue index: re-added job was never added");
  const int position = static_cast<int>(pos - stream.ids.begin());
  stream.planned.Set(position, planned_seconds);
  stream.head = std::min(stream.head, position);
  ++stream.waiting;
  class_of_.emplace(id, cls);
  LowerTo(cls, id);
  ++walk_;
}

bool QueueIndex::Holds(JobId id, int cls) const {
  if (cls >= static_cast<int>(streams_.size())) return false;
  const std::vector<JobId>& ids = streams_[cls].ids;
  return std::binary_search(ids.begin(), ids.end(), id);
}

JobId QueueIndex::FirstWaitingAfter(JobId after) const {
  JobId best = kNoJob;
  for (int cls = 0; cls < static_cast<int>(streams_.size()); ++cls) {
    if (streams_[cls].waiting == 0) continue;
    const JobId id = FindIn(cls, after, std::numeric_limits<double>::max());
    if (id != kNoJob && (best == kNoJob || id < best)) best = id;
  }
  return best;
}

JobId QueueIndex::FindIn(int cls, JobId after, double limit) const {
  const int pos = FindPositionIn(cls, after, limit);
  return pos < 0 ? kNoJob : streams_[cls].ids[pos];
}

int QueueIndex::FindPositionIn(int cls, JobId after, double limit) const {
  const Stream& stream = streams_[cls];
  const auto from = std::upper_bound(stream.ids.begin(), stream.ids.end(), after);
  return stream.planned.FirstAtMost(limit, static_cast<int>(from - stream.ids.begin()));
}

JobId QueueIndex::First() {
  Restart();
  static const ClassFilter kAll;
  return Next(kAll);
}

void QueueIndex::Restart() {
  ++walk_;
  cursor_ = kNoJob;
}

JobId QueueIndex::Next(const ClassFilter& filter) {
  const JobId best = Scan(filter);
  if (best != kNoJob) cursor_ = best;
  return best;
}

JobId QueueIndex::NextAfter(JobId after, const ClassFilter& filter) {
  cursor_ = std::max(cursor_, after);
  return Scan(filter);
}

void QueueIndex::BoundTree::Grow(int classes) {
  if (classes <= leaves_) return;
  int leaves = std::max(1, leaves_);
  while (leaves < classes) leaves *= 2;
  std::vector<JobId> tree(2 * static_cast<size_t>(leaves), kNoBound);
  for (int i = 0; i < leaves_; ++i) tree[leaves + i] = tree_[leaves_ + i];
  for (int node = leaves - 1; node >= 1; --node) {
    tree[node] = std::min(tree[2 * node], tree[2 * node + 1]);
  }
  tree_ = std::move(tree);
  leaves_ = leaves;
}

void QueueIndex::BoundTree::Set(int cls, JobId bound) {
  int node = leaves_ + cls;
  if (tree_[node] == bound) return;
  tree_[node] = bound;
  for (node /= 2; node >= 1; node /= 2) {
    tree_[node] = std::min(tree_[2 * node], tree_[2 * node + 1]);
  }
}

int QueueIndex::BoundTree::ArgMin() const {
  int node = 1;
  while (node < leaves_) node = tree_[2 * node] == tree_[node] ? 2 * node : 2 * node + 1;
  return node - leaves_;
}

JobId QueueIndex::LowerBound(int cls) const {
  const Stream& stream = streams_[cls];
  // Positions before head are all +infinity (started, or never admitted by any limit).
  return stream.waiting == 0 || stream.head == static_cast<int>(stream.ids.size())
             ? BoundTree::kNoBound
             : stream.ids[stream.head];
}

void QueueIndex::LowerTo(int cls, JobId id) {
  bounds_.Grow(static_cast<int>(streams_.size()));
  if (bounds_.Get(cls) > id) bounds_.Set(cls, id);
}

void QueueIndex::SetBound(int cls, JobId bound) {
  bounds_.Set(cls, bound);
  if (!in_touched_[cls]) {
    in_touched_[cls] = 1;
    touched_.push_back(cls);
  }
}

void QueueIndex::SyncBounds(const ClassFilter& filter, double short_limit) {
  if (bounds_walk_ != walk_) {
    // A class's first waiting job only grows while no job is added or put back (they lower the
    // bound themselves), so the classes not touched since still hold a lower bound.
    for (int cls : touched_) {
      bounds_.Set(cls, LowerBound(cls));
      in_touched_[cls] = 0;
    }
    touched_.clear();
    for (int cls : narrowed_) in_narrowed_[cls] = 0;
    narrowed_.clear();
  } else if (filter.widened() != bounds_widened_ || filter.short_limit() != bounds_short_limit_) {
    // A class checked under a narrower setting than the filter's now may admit a job it refused:
    // back to its first waiting job. A class checked under `any` admitted all already.
    size_t kept = 0;
    for (int cls : narrowed_) {
      const ClassFilter::Mode mode = filter.mode(cls);
      const double limit =
          mode == ClassFilter::kAny ? std::numeric_limits<double>::max() : short_limit;
      const Cached& cached = cached_[cls];
      if (cached.walk == walk_ && cached.mode == mode &&
          (mode == ClassFilter::kNone || cached.limit == limit)) {
        narrowed_[kept++] = cls;
        continue;
      }
      bounds_.Set(cls, LowerBound(cls));
      in_narrowed_[cls] = 0;
    }
    narrowed_.resize(kept);
  }
  bounds_walk_ = walk_;
  bounds_widened_ = filter.widened();
  bounds_short_limit_ = filter.short_limit();
}

JobId QueueIndex::Scan(const ClassFilter& filter) {
  // A short-only limit is widened by a rounding margin: the caller decides exactly.
  const double short_limit =
      filter.short_limit() + 1e-9 * std::max(1.0, std::abs(filter.short_limit()));
  SyncBounds(filter, short_limit);
  // The class at the top of the bounds is checked: once its bound is its exact answer, every
  // other class's answer is at least its bound, so no lower: that answer is the next job.
  while (bounds_.Min() != BoundTree::kNoBound) {
    const int cls = bounds_.ArgMin();
    const JobId bound = bounds_.Min();
    const Stream& stream = streams_[cls];
    const ClassFilter::Mode mode = filter.mode(cls);
    Cached& cached = cached_[cls];
    if (stream.waiting == 0 || mode == ClassFilter::kNone) {
      // Nothing to give until a widening (SyncBounds sees the recorded mode differ) or a new walk.
      cached.mode = mode;
      cached.walk = walk_;
      cached.next = kNoJob;
      SetBound(cls, BoundTree::kNoBound);
      if (mode == ClassFilter::kNone && !in_narrowed_[cls]) {
        in_narrowed_[cls] = 1;
        narrowed_.push_back(cls);
      }
      continue;
    }
    const double limit =
        mode == ClassFilter::kAny ? std::numeric_limits<double>::max() : short_limit;
    // A cached answer stays right while the cursor has not reached it: nothing between the
    // cursor it was computed from and it was admitted, and no job is added during a walk.
    if (cached.walk != walk_ || cached.mode != mode || cached.limit != limit ||
        (cached.next != kNoJob && cached.next <= cursor_)) {
      // The class's first waiting job, if after the cursor and admitted, is its answer (every
      // position before it is +infinity); else the trees say.
      const JobId first = LowerBound(cls);
      int position = -1;
      if (first != BoundTree::kNoBound && first > cursor_ &&
          stream.planned.At(stream.head) <= limit) {
        position = stream.head;
      } else {
        // A walk that passed the last answer steps on from it: every position up to it holds a
        // job at or before the cursor. A few steps, then the trees (started jobs keep their
        // places, so the gap may be long).
        bool stepped = false;
        if (cached.next != kNoJob && cached.next <= cursor_) {
          const int size = stream.planned.size();
          for (int p = cached.position + 1, steps = 0; steps < 8; ++p, ++steps) {
            if (p == size) {
              stepped = true;
              break;
            }
            if (stream.ids[p] > cursor_ && stream.planned.At(p) <= limit) {
              position = p;
              stepped = true;
              break;
            }
          }
        }
        if (!stepped) position = FindPositionIn(cls, cursor_, limit);
      }
      cached.next = position < 0 ? kNoJob : stream.ids[position];
      cached.position = position;
      cached.mode = mode;
      cached.limit = limit;
      cached.walk = walk_;
      if (mode != ClassFilter::kAny && !in_narrowed_[cls]) {
        in_narrowed_[cls] = 1;
        narrowed_.push_back(cls);
      }
    }
    const JobId exact = cached.next == kNoJob ? BoundTree::kNoBound : cached.next;
    if (exact == bound) return exact;
    SetBound(cls, exact);
  }
  return kNoJob;
}

void QueueIndex::OnStart(JobId id) {
  auto it = class_of_.find(id);
  CHECK(it != class_of_.end(), "queue index: started job was not waiting");
  Stream& stream = streams_[it->second];
  const auto pos = std::lower_bound(stream.ids.begin(), stream.ids.end(), id);
  const int position = static_cast<int>(pos - stream.ids.begin());
  stream.planned.Set(position, std::numeric_limits<double>::infinity());
  --stream.waiting;
  if (position == stream.head) {
    const int size = stream.planned.size();
    while (stream.head < size &&
           stream.planned.At(stream.head) == std::numeric_limits<double>::infinity()) {
      ++stream.head;
    }
  }
  class_of_.erase(it);
}

// ---- EasyBackfill ----

int EasyBackfill::ClassOf(const SchedulingContext& context, JobId id) {
  if (id >= static_cast<JobId>(class_of_.size())) {
    class_of_.resize(std::max<size_t>(id + 1, class_of_.size() * 2), -1);
  }
  int& cls = class_of_[id];
  if (cls < 0) {
    const PlacementRequest& request = context.active(id).request;
    const RequestShape key = ShapeOf(request);
    auto it = class_ids_.find(key);
    if (it == class_ids_.end()) {
      it = class_ids_.emplace(key, static_cast<int>(class_ids_.size())).first;
    }
    cls = it->second;
  }
  return cls;
}

bool EasyBackfill::FitsOn(const SchedulingContext& context, const Resources& resources,
                          const PlacementRequest& request, Allocation* out) {
  return CountFits(resources, request) && context.placement().Find(resources, request, out);
}

void EasyBackfill::StartJob(SchedulingContext& context, CandidateOrder& order, JobId id,
                            Allocation allocation) {
  const bool unreserved_current = UnreservedCurrent(context);
  context.Start(id, std::move(allocation));
  ++plan_changes_;
  const double end = rule_.EstimatedEnd(context, id);
  const Allocation& held = context.active(id).allocation;
  const PlacementRequest& request = context.active(id).request;
  // The horizon holds the GPUs (and CPUs) of every running job that ends after horizon_time_.
  if (end > horizon_time_) TakeAllocation(*horizon_, request, held);
  Held& kept = held_.Insert(context, id);
  kept.entry = by_end_.emplace(std::make_pair(end, id), context.run(id).active).first;
  kept.allocation = held;
  kept.request = request;
  if (unreserved_current) KeepUnreservedCurrent(context, request, held);
  order.OnStart(id);
}

void EasyBackfill::OnCompletion(SchedulingContext& context, JobId id) {
  const Held* kept = held_.Find(context, id);
  if (kept == nullptr) return;
  ++plan_changes_;
  if (kept->entry->first.first > horizon_time_) {
    GiveBackAllocation(*horizon_, kept->request, kept->allocation);
  }
  by_end_.erase(kept->entry);
  held_.Erase(context, id);
}

bool EasyBackfill::StepForward() {
  auto it = by_end_.upper_bound(std::make_pair(horizon_time_, std::numeric_limits<JobId>::max()));
  if (it == by_end_.end()) return false;
  const double end = it->first.first;
  for (; it != by_end_.end() && it->first.first == end; ++it) {
    const Held& kept = held_.OfSlot(it->second);
    GiveBackAllocation(*horizon_, kept.request, kept.allocation);
  }
  horizon_time_ = end;
  return true;
}

bool EasyBackfill::StepBack() {
  auto it = by_end_.upper_bound(std::make_pair(horizon_time_, std::numeric_limits<JobId>::max()));
  if (it == by_end_.begin()) return false;
  --it;
  const double end = it->first.first;
  while (true) {
    const Held& kept = held_.OfSlot(it->second);
    TakeAllocation(*horizon_, kept.request, kept.allocation);
    if (it == by_end_.begin()) {
      horizon_time_ = -std::numeric_limits<double>::infinity();
      return true;
    }
    --it;
    if (it->first.first != end) {
      horizon_time_ = it->first.first;
      return true;
    }
  }
}

void EasyBackfill::Reserve(const SchedulingContext& context, JobId head) {
  // The same head on the same horizon, with no running job added or gone: the same reservation
  // (unless the placement draws random numbers: then it is asked again, as every pass did).
  if (head == reserved_head_ && plan_changes_ == reserved_plan_changes_ &&
      horizon_->version() == reserved_horizon_version_ &&
      !context.placement().DrawsRandomNumbers()) {
    return;
  }
  const PlacementRequest& request = context.active(head).request;
  // Fitting is monotone in tau (the horizon only gains free GPUs as tau grows), and so is having
  // enough free GPUs of an allowed type, which fitting needs. A head wider than every node of an
  // allowed type spreads over nodes, where free counts nearly decide: the horizon moves, by counts
  // alone, to the earliest end group with enough free GPUs, and from there the placement itself
  // is asked group by group (one placement search where counts decide, instead of one per group
  // passed). A head that fits on one node depends on how the free GPUs lie, which counts do not
  // see: where it fits on the horizon as it is (the same head's last reservation, most often
  // still right), one group back decides whether the horizon stays; where it fits there too, the
  // horizon moves back by counts as for a wide head; where it does not fit, forward.
  // Counts can mislead a wide head too (a placement that wants whole nodes, or free GPUs spread
  // thin): a request class whose last move by counts then took more than 16 placement searches
  // starts where the horizon is, as a one-node head, for its next 8 reservations, then tries
  // counts again; 16, 32, ... up to 4096 after each further such move in a row. Either way the
  // horizon ends at the earliest end group where the head fits.
  const int cls = ClassOf(context, head);
  if (cls >= static_cast<int>(counts_mislead_.size())) counts_mislead_.resize(cls + 1);
  CountsMislead& mislead = counts_mislead_[cls];
  bool spans_nodes = true;
  for (const Partition& part : horizon_->partitions()) {
    if (request.AllowsType(part.gpu_type) && request.gpus <= part.gpus_per_node) {
      spans_nodes = false;
    }
  }
  bool found = false;
  bool by_counts = spans_nodes && mislead.skip == 0;
  if (spans_nodes && mislead.skip > 0) --mislead.skip;
  if (!by_counts) {
    Allocation fits;
    if (FitsOn(context, *horizon_, request, &fits)) {
      if (!StepBack()) {
        reserved_ = std::move(fits);  // the horizon is the live state: the head fits now
        found = true;
      } else if (!FitsOn(context, *horizon_, request, &reserved_)) {
        StepForward();
        reserved_ = std::move(fits);
        found = true;
      } else {
        by_counts = true;  // further back: by counts, then forward by placement
      }
    }
  }
  if (by_counts && CountFits(*horizon_, request)) {
    double target = 0;
    if (EarliestCountFit(context, request, &target)) {
      StepBackTo(target);
    } else {
      while (StepBack()) {
        if (!CountFits(*horizon_, request)) {
          StepForward();
          break;
        }
      }
    }
  }
  int searches = 0;  // placement searches after a move by counts
  while (!found && (++searches, !FitsOn(context, *horizon_, request, &reserved_))) {
    // Every running job ends; on the empty cluster the head fits (it was not rejected), but
    // failed GPUs may keep it out until a repair no one can foresee: then no reservation.
    if (!StepForward()) {
      CHECK(!context.failed_gpus().empty(),
            "easy: the head fits nowhere even with every running job ended");
      reserved_.gpus.clear();
      horizon_time_ = std::numeric_limits<double>::infinity();
      break;
    }
  }
  if (by_counts && spans_nodes) {
    if (searches > 16) {
      mislead.misses = std::min(mislead.misses + 1, 10);
      mislead.skip = 4 << mislead.misses;
    } else {
      mislead.misses = 0;
      mislead.skip = 0;
    }
  }
  reservation_time_ = horizon_time_;
  reserved_head_ = head;
  reserved_plan_changes_ = plan_changes_;
  reserved_horizon_version_ = horizon_->version();
  IndexReservation(context);
}

bool EasyBackfill::EarliestCountFit(const SchedulingContext& context,
                                    const PlacementRequest& request, double* target) {
  // The free GPUs of each type the head allows, as the horizon would have them stepped back
  // group by group: every group holds whole GPUs, taken back by their number (per type).
  const Cluster& cluster = context.cluster();
  const std::vector<int>& types = cluster.gpu_types();
  // (A type the head does not allow starts far below any count, so it never fits.)
  count_free_.assign(types.size(), std::numeric_limits<int>::min() / 2);
  for (size_t t = 0; t < types.size(); ++t) {
    if (request.AllowsType(types[t])) count_free_[t] = horizon_->free_of_type(types[t]);
  }
  const auto fits = [&] {
    for (int free : count_free_) {
      if (free >= request.gpus) return true;
    }
    return false;
  };
  *target = horizon_time_;
  auto it = by_end_.upper_bound(std::make_pair(horizon_time_, std::numeric_limits<JobId>::max()));
  while (it != by_end_.begin()) {
    // Take back the group ending at the end of the job before `it`.
    const double end = std::prev(it)->first.first;
    do {
      --it;
      const Allocation& allocation = held_.OfSlot(it->second).allocation;
      if (allocation.milli > 0 || allocation.mig_profile >= 0) return false;  // not by counts
      if (types.size() == 1) {
        count_free_[0] -= static_cast<int>(allocation.gpus.size());
      } else {
        for (int g : allocation.gpus) {
          const int type = cluster.node(cluster.NodeOfGpu(g)).gpu_type;
          for (size_t t = 0; t < types.size(); ++t) count_free_[t] -= types[t] == type;
        }
      }
    } while (it != by_end_.begin() && std::prev(it)->first.first == end);
    if (!fits()) {
      *target = end;  // the horizon stops with this group released
      return true;
    }
    *target = it == by_end_.begin() ? -std::numeric_limits<double>::infinity()
                                    : std::prev(it)->first.first;
  }
  return true;
}

void EasyBackfill::StepBackTo(double target) {
  auto it = by_end_.upper_bound(std::make_pair(horizon_time_, std::numeric_limits<JobId>::max()));
  while (it != by_end_.begin() && std::prev(it)->first.first > target) {
    --it;
    const Held& kept = held_.OfSlot(it->second);
    TakeAllocation(*horizon_, kept.request, kept.allocation);
  }
  horizon_time_ = target;
}

bool EasyBackfill::KeepsReservation(const SchedulingContext& context, JobId id, JobId head,
                                   const Allocation& allocation) {
  if (!horizon_->host_limited()) {
    // GPUs only: the reservation holds if the job's GPUs avoid the reserved ones (both ascending).
    // A binary search per GPU of the job: the head's reservation may hold thousands of GPUs.
    const std::vector<int>& reserved = reserved_.gpus;
    auto r = reserved.begin();
    for (int g : allocation.gpus) {
      r = std::lower_bound(r, reserved.end(), g);
      if (r == reserved.end()) return true;
      if (*r == g) return false;
    }
    return true;
  }
  // With the job running at t_s, the head's GPUs must be free and its CPUs and memory still fit
  // there.
  const PlacementRequest& request = context.active(id).request;
  TakeAllocation(*horizon_, request, allocation);
  const bool keeps = AllocationFits(*horizon_, context.active(head).request.host, reserved_);
  GiveBackAllocation(*horizon_, request, allocation);
  return keeps;
}

bool EasyBackfill::PlaceOutlasting(const SchedulingContext& context, JobId id, JobId head,
                                   Allocation* allocation) {
  if (KeepsReservation(context, id, head, *allocation)) return true;
  // Can the head be placed at t_s elsewhere, with this job running? (Not if the job's GPUs leave
  // too few of every type the head allows: then the horizon need not be changed to know.)
  const PlacementRequest& head_request = context.active(head).request;
  if (CountFitsWithout(context, head_request, *allocation)) {
    const PlacementRequest& request = context.active(id).request;
    TakeAllocation(*horizon_, request, *allocation);
    Allocation moved;
    const bool head_fits = FitsOn(context, *horizon_, head_request, &moved);
    GiveBackAllocation(*horizon_, request, *allocation);
    if (head_fits) {
      reserved_ = std::move(moved);
      reserved_head_ = kNoJob;  // the next pass plans the head again
      IndexReservation(context);
      return true;
    }
  }
  // Else somewhere outside the reserved nodes: first by counts, without building that state.
  if (!UnreservedCurrent(context) && !UnreservedCountFits(context, context.active(id).request)) {
    return false;
  }
  if (!UnreservedCurrent(context)) BuildUnreserved(context);
  Allocation elsewhere;
  elsewhere.node = -1;
  if (!FitsOn(context, *unreserved_, context.active(id).request, &elsewhere)) return false;
  *allocation = std::move(elsewhere);
  return true;
}

bool EasyBackfill::CountFitsWithout(const SchedulingContext& context,
                                    const PlacementRequest& head_request,
                                    const Allocation& allocation) const {
  // Only whole GPUs count down free_of_type exactly; for shares and MIG instances ask the
  // placement.
  if (allocation.milli > 0 || allocation.mig_profile >= 0) return true;
  const Cluster& cluster = context.cluster();
  for (int type : cluster.gpu_types()) {
    if (!head_request.AllowsType(type)) continue;
    // Every GPU of the job is free on the horizon (free now, so free at t_s): taking it counts
    // its type down by one.
    int taken = static_cast<int>(allocation.gpus.size());
    if (cluster.gpu_types().size() > 1) {
      taken = 0;
      for (int g : allocation.gpus) taken += cluster.node(cluster.NodeOfGpu(g)).gpu_type == type;
    }
    if (horizon_->free_of_type(type) - taken >= head_request.gpus) return true;
  }
  return false;
}

void EasyBackfill::BuildUnreserved(const SchedulingContext& context) {
  if (unreserved_) {
    *unreserved_ = context.resources();
  } else {
    unreserved_.emplace(context.resources());
  }
  std::vector<int> taken;
  if (!unreserved_->host_limited()) {
    // The reserved GPUs free now, a word of the free bits at a time.
    for (const auto& [word, mask] : reserved_words_) {
      for (uint64_t free = unreserved_->free_word(word) & mask; free != 0; free &= free - 1) {
        taken.push_back((word << 6) + __builtin_ctzll(free));
      }
    }
    unreserved_->Allocate(taken);
  } else {
    // The head will need CPUs and memory beside its reserved GPUs, which jobs ending before its
    // start may hold now: a job outlasting the reservation keeps off its nodes entirely (their
    // free GPUs, CPUs and memory are taken here).
    const Cluster& cluster = context.cluster();
    std::vector<int> nodes;
    if (reserved_.gpus.empty() && reserved_.node >= 0) nodes.push_back(reserved_.node);
    for (int g : reserved_.gpus) {
      const int node = cluster.NodeOfGpu(g);
      if (nodes.empty() || nodes.back() != node) nodes.push_back(node);
    }
    for (int node : nodes) {
      taken.clear();
      unreserved_->AppendLowestFreeGpus(node, unreserved_->free_gpus(node), &taken);
      unreserved_->Allocate(taken);
      unreserved_->AllocateHostOn(
          node, HostDemand{unreserved_->free_cpu_milli(node), unreserved_->free_memory_mib(node)});
      const Node& spec = cluster.node(node);
      for (int g = spec.first_gpu; g < spec.first_gpu + spec.gpu_count; ++g) {
        CloseMigGpu(*unreserved_, g);
      }
    }
  }
  // A reserved GPU in MIG mode that holds instances now is not free, so it was not taken above:
  // its free slices are (an instance placed there could outlast the reservation).
  for (int g : reserved_.gpus) CloseMigGpu(*unreserved_, g);
  unreserved_generation_ = reservation_generation_;
  unreserved_live_version_ = context.resources().version();
}

void EasyBackfill::IndexReservation(const SchedulingContext& context) {
  ++reservation_generation_;
  reserved_words_.clear();
  const std::vector<int>& reserved = reserved_.gpus;  // ascending
  for (size_t i = 0; i < reserved.size();) {
    const int word = reserved[i] >> 6;
    uint64_t mask = 0;
    if ((reserved[i] & 63) == 0 && i + 63 < reserved.size() && reserved[i + 63] == reserved[i] + 63) {
      mask = ~uint64_t{0};  // 64 ascending distinct GPUs from a word's first: the whole word
      i += 64;
    } else {
      for (; i < reserved.size() && (reserved[i] >> 6) == word; ++i) {
        mask |= uint64_t{1} << (reserved[i] & 63);
      }
    }
    reserved_words_.emplace_back(word, mask);
  }
  const Cluster& cluster = context.cluster();
  if (cluster.gpu_types().size() == 1) {
    reserved_type_ = cluster.gpu_types()[0];
    return;
  }
  reserved_type_ = reserved_.gpu_type;
  for (size_t i = 0; i < reserved.size() && reserved_type_ >= 0;) {
    const int node = cluster.NodeOfGpu(reserved[i]);
    if (cluster.node(node).gpu_type != reserved_type_) reserved_type_ = -1;
    while (i < reserved.size() && cluster.NodeOfGpu(reserved[i]) == node) ++i;
  }
}

bool EasyBackfill::UnreservedCountFits(const SchedulingContext& context,
                                       const PlacementRequest& request) {
  const Resources& live = context.resources();
  // Counted exactly here: whole GPUs, without host limits, the reserved ones all of one type.
  if (live.host_limited() || request.milli > 0 || reserved_.milli > 0 ||
      reserved_.mig_profile >= 0) {
    return true;
  }
  if (reserved_type_ < 0 && !reserved_.gpus.empty()) return true;
  if (free_reserved_generation_ != reservation_generation_ ||
      free_reserved_live_version_ != live.version()) {
    free_reserved_ = 0;
    for (const auto& [word, mask] : reserved_words_) {
      free_reserved_ += __builtin_popcountll(live.free_word(word) & mask);
    }
    free_reserved_generation_ = reservation_generation_;
    free_reserved_live_version_ = live.version();
  }
  for (int type : context.cluster().gpu_types()) {
    if (!request.AllowsType(type)) continue;
    const int free = live.free_of_type(type) - (type == reserved_type_ ? free_reserved_ : 0);
    if (free >= request.gpus) return true;
  }
  return false;
}

bool EasyBackfill::UnreservedCurrent(const SchedulingContext& context) const {
  return unreserved_ && unreserved_generation_ == reservation_generation_ &&
         unreserved_live_version_ == context.resources().version();
}

void EasyBackfill::KeepUnreservedCurrent(const SchedulingContext& context,
                                         const PlacementRequest& request, const Allocation& held) {
  // The live state lost the job's GPUs; unreserved_ loses those of them it still had free: all
  // but the reserved ones, which it holds already. Whole GPUs without host limits or placement
  // constraints only; anything else is rebuilt from the live state when next needed.
  if (unreserved_->host_limited() || held.milli > 0 || held.mig_profile >= 0 ||
      request.constraint != 0 || held.gpus.empty()) {
    return;  // stale: the live state's version moved on
  }
  // A binary search per GPU of the job: the reservation may hold thousands of GPUs.
  outside_reserved_.clear();
  auto r = reserved_.gpus.begin();
  for (int g : held.gpus) {
    r = std::lower_bound(r, reserved_.gpus.end(), g);
    if (r == reserved_.gpus.end() || *r != g) outside_reserved_.push_back(g);
  }
  unreserved_->Allocate(outside_reserved_);
  unreserved_live_version_ = context.resources().version();
}

void EasyBackfill::SyncFailedGpus(const SchedulingContext& context) {
  if (context.failed_gpus_version() == failed_version_) return;
  // Failed GPUs are held on the horizon at every time: nobody knows when they come back.
  horizon_->Release(failed_);
  failed_ = context.failed_gpus();
  horizon_->Allocate(failed_);
  failed_version_ = context.failed_gpus_version();
}

void EasyBackfill::Pass(SchedulingContext& context, CandidateOrder& order, bool backfill) {
  if (!horizon_) {
    horizon_.emplace(context.resources());  // first pass: nothing running yet
    failed_ = context.failed_gpus();        // already out of the live state copied
    failed_version_ = context.failed_gpus_version();
  }
  SyncFailedGpus(context);
  Allocation allocation;
  JobId head = order.First();
  filter_.Reset();
  // Jobs a site's limits hold back (SchedulingContext::MayStart) are passed over: they neither
  // start nor hold a reservation, as Slurm's backfill skips them.
  while (head != kNoJob) {
    if (context.MayStart(head)) {
      if (!context.TryPlace(head, &allocation)) break;
      StartJob(context, order, head, std::move(allocation));
    }
    head = order.Next(filter_);
  }
  if (head == kNoJob) return;
  const WaitReason head_reason = waits_.StateNoFit(context, head, WaitReason::kCapacity);
  blocked_ = true;
  if (!backfill) {
    unexamined_ = WaitReason::kQueueHead;
    return;
  }
  // Jobs of the head's class that the scan skips wait for what the head waits for.
  Note(context, head, head_reason);
  unexamined_ = WaitReason::kCapacity;  // classes the scan does not reach: nothing is free

  bool reserved = false;
  const double now = context.now();
  if (head != promised_head_) {
    // A new blocked head: its reservation is its promise (the engine keeps the first).
    promised_head_ = head;
    Reserve(context, head);
    filter_.SetShortLimit(reservation_time_ - now);
    reserved = true;
    // (t_s is before now only if a running job outlives its estimate: kills turned off.)
    if (reservation_time_ < std::numeric_limits<double>::infinity()) {
      context.Promise(head, std::max(reservation_time_, now));
    }
  }
  // Without host limits no job can start once no GPU has room (none wholly free, none shared with
  // room, none in MIG mode); with them a CPU-only job still may.
  const bool host_limited = context.resources().host_limited();
  for (JobId id = order.Next(filter_); id != kNoJob; id = order.Next(filter_)) {
    if (!context.resources().AnyGpuRoom() && !host_limited) break;
    const int cls = ClassOf(context, id);
    if (!filter_.Admits(cls, rule_.Planned(context.job(id))) || !context.MayStart(id)) continue;
    if (!context.TryPlace(id, &allocation)) {
      filter_.Set(cls, ClassFilter::kNone);
      Note(context, id, waits_.StateNoFit(context, id, WaitReason::kCapacity));
      continue;
    }
    if (!reserved) {
      Reserve(context, head);
      filter_.SetShortLimit(reservation_time_ - now);
      reserved = true;
    }
    const bool ends_in_time = now + rule_.Planned(context.job(id)) <= reservation_time_;
    if (!ends_in_time) {
      if (filter_.mode(cls) == ClassFilter::kShortOnly ||
          !PlaceOutlasting(context, id, head, &allocation)) {
        filter_.Set(cls, ClassFilter::kShortOnly);
        waits_.State(context, id, WaitReason::kReservation);
        Note(context, id, WaitReason::kReservation);
        continue;
      }
    }
    StartJob(context, order, id, std::move(allocation));
    filter_.Reset();  // the state changed: classes ruled out may fit again
  }
}

void EasyBackfill::Note(SchedulingContext& context, JobId id, WaitReason reason) {
  const int cls = ClassOf(context, id);
  if (cls >= static_cast<int>(class_reason_.size())) class_reason_.resize(cls + 1, -1);
  class_reason_[cls] = static_cast<int8_t>(reason);
}

void EasyBackfill::EndPass(SchedulingContext& context) {
  if (blocked_) {
    for (int cls = 0; cls < static_cast<int>(class_ids_.size()); ++cls) {
      const bool noted = cls < static_cast<int>(class_reason_.size()) && class_reason_[cls] >= 0;
      context.SetGroupWaitReason(cls,
                                 noted ? static_cast<WaitReason>(class_reason_[cls]) : unexamined_);
    }
    class_reason_.assign(class_reason_.size(), -1);
    blocked_ = false;
  }
  waits_.EndPass(context);
}

}  // namespace clustersim
