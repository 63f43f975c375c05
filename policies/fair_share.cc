// fair-share: Slurm-like fair-share priority (docs/policies.md). Each account (a user, or a virtual
// cluster with by=vc) has the factor F = 2^(-U/S), where U is its decayed GPU-second usage over
// the sum of every account's (U = 0 while nobody has used anything) and S its share over the sum
// of the shares of the accounts seen so far; the waiting jobs are ordered by F descending, ties
// by submit order, and served with strict head-of-line blocking or EASY backfilling.
//
// Usage accrues continuously while jobs run and decays with half-life h: the decayed usage at t is
// u(t) = sum over running intervals [a, b] of GPUs x integral_a^b 2^(-(t - s)/h) ds. It is kept
// exactly by advancing every account at each completion and each pass over dt = t - t_last with
// the GPUs g it held throughout: u <- u x 2^(-dt/h) + g x (h / ln 2) x (1 - 2^(-dt/h)). The
// accounts, their usage and factors are a FairShareLedger (policies/fair_share_ledger.h), the one
// `priority` with within=fair-share also keeps; this policy adds a waiting queue per account.
//
// Parameters:
//   by (user): user | vc — the account a job is charged to;
//   shares (equal): name:weight,... (weights > 0; an account not listed has weight 1);
//   half_life (604800): seconds, > 0 (inf = no decay);
//   backfill (none): none = strict blocking at the first job that does not fit; easy = EASY
//     backfilling over the fair-share order (policies/backfill.h);
//   walltime (trace): as for easy (wall times used by backfill=easy; kills apply in both modes).
// With backfill=easy the blocked head's reservation is recorded as its promise (`reserved_start`),
// an estimate: the order may change before it starts (policies/backfill.h).
// Cost of a pass: O(accounts x log accounts) to order the accounts, plus the walk: each account
// keeps its waiting jobs in a QueueIndex (policies/backfill.h), so strict blocking costs
// O(starts + 1) steps and backfill=easy what EASY's pass costs, O(distance the horizon moves +
// (starts + 1) x request classes x log queue), with O(log k) more per job returned from a group
// of k accounts of equal factor and O(k) each time the filter widens after a start. With one
// account (a trace without users) the order is submission order and the pass is EASY's.
#include <algorithm>
#include <functional>
#include <queue>
#include <set>

#include "policies/backfill.h"
#include "policies/fair_share_ledger.h"
#include "policies/registry.h"
#include "sim/util/error.h"

namespace clustersim {
namespace {

struct Options {
  FairShareLedger::Options ledger;  // by, shares, half_life
  bool backfill = false;
};

// The waiting jobs in fair-share order: accounts by factor descending; accounts with equal
// factors form a group whose jobs are merged by submission order. Each account's QueueIndex
// jumps to its next job the filter admits, so a walk costs what EASY's does on one queue: with
// one account per group exactly that; a group of k accounts adds a heap of k lower bounds
// (O(log k) per job returned, O(k) each time the filter widens after a start).
class FairShareOrder final : public CandidateOrder {
 public:
  // queues[a]: account a's waiting jobs; the ledger holds the accounts' factors.
  FairShareOrder(const FairShareLedger& ledger, std::vector<QueueIndex>& queues,
                 std::function<void(JobId)> on_start)
      : ledger_(ledger), queues_(queues), on_start_(std::move(on_start)) {}

  // Sorts the accounts with waiting jobs for this pass. REQUIRES: factors computed.
  void Build() {
    sorted_.clear();
    for (int a = 0; a < static_cast<int>(queues_.size()); ++a) {
      if (!queues_[a].empty()) sorted_.push_back(a);
    }
    // Account indices are in order of first arrival; ties of factor are merged below anyway.
    std::stable_sort(sorted_.begin(), sorted_.end(),
                     [&](int a, int b) { return ledger_.factor(a) > ledger_.factor(b); });
  }

  JobId First() override {
    group_end_ = 0;
    group_.clear();
    static const ClassFilter kAll;
    return Next(kAll);
  }

  JobId Next(const ClassFilter& filter) override {
    while (true) {
      if (group_.empty()) {
        if (group_end_ >= sorted_.size()) return kNoJob;
        OpenGroup(filter);
      }
      const JobId id =
          group_.size() == 1 ? queues_[group_[0]].Next(filter) : NextInGroup(filter);
      if (id != kNoJob) {
        cursor_ = id;
        return id;
      }
      group_.clear();
    }
  }

  void OnStart(JobId id) override { on_start_(id); }

 private:
  void OpenGroup(const ClassFilter& filter) {
    const double factor = ledger_.factor(sorted_[group_end_]);
    while (group_end_ < sorted_.size() && ledger_.factor(sorted_[group_end_]) == factor) {
      queues_[sorted_[group_end_]].Restart();
      group_.push_back(sorted_[group_end_]);
      ++group_end_;
    }
    cursor_ = kNoJob;
    if (group_.size() > 1) {
      merge_.Refill(static_cast<int>(group_.size()), filter,
                    [&](int s) { return NextOfAccount(s, filter); });
    }
  }

  // Source s of the merge: the open group's account s.
  JobId NextOfAccount(int s, const ClassFilter& filter) {
    return queues_[group_[s]].NextAfter(cursor_, filter);
  }
  JobId NextInGroup(const ClassFilter& filter) {
    return merge_.Next(static_cast<int>(group_.size()), filter,
                       [&](int s) { return NextOfAccount(s, filter); });
  }

  const FairShareLedger& ledger_;
  std::vector<QueueIndex>& queues_;
  std::function<void(JobId)> on_start_;
  std::vector<int> sorted_;  // accounts with waiting jobs, by factor descending
  size_t group_end_ = 0;     // sorted_[0, group_end_) have been opened
  std::vector<int> group_;   // the open group's accounts
  JobId cursor_ = kNoJob;    // the last job returned in the open group
  LazyMerge merge_;          // of the open group's accounts
};

class FairShare final : public Policy {
 public:
  FairShare(Options options, WalltimeRule walltime)
      : options_(std::move(options)),
        ledger_(options_.ledger),
        backfill_(walltime),
        order_(ledger_, queues_, [this](JobId id) { OnStart(id); }) {}

  void Schedule(SchedulingContext& context) override {
    ledger_.Advance(context.now());
    ledger_.ComputeFactors();
    order_.Build();
    context_ = &context;
    backfill_.Pass(context, order_, options_.backfill);
    backfill_.EndPass(context);
  }
  int WaitGroup(SchedulingContext& context, JobId id) override {
    return backfill_.WaitGroup(context, id);
  }

  std::string IdleWarning(const Trace& trace, const ModelRuntime* /*models*/) const override {
    std::set<Symbol> users, vcs;
    for (const Job& job : trace.jobs) {
      users.insert(job.user);
      vcs.insert(job.vc);
      if (users.size() > 1 && vcs.size() > 1) return "";
    }
    const std::set<Symbol>& accounts = options_.ledger.by_vc ? vcs : users;
    if (accounts.size() > 1) return "";
    const std::string by = options_.ledger.by_vc ? "vc" : "user";
    const std::string same = options_.backfill ? "easy" : "fcfs";
    std::string text = "fair-share by=" + by + ": every job of the trace is charged to one " +
                       (options_.ledger.by_vc ? "virtual cluster" : "user") +
                       ", so there is nothing to share and the policy schedules like " + same;
    const std::set<Symbol>& other = options_.ledger.by_vc ? users : vcs;
    if (other.size() > 1) {
      text += "; --param by=" + std::string(options_.ledger.by_vc ? "user" : "vc") +
              " shares between its " + std::to_string(other.size()) +
              (options_.ledger.by_vc ? " users" : " virtual clusters");
    } else {
      text += "; the trace names neither users nor virtual clusters to share between (use " + same +
              ")";
    }
    return text;
  }

  void OnArrival(SchedulingContext& context, JobId id) override {
    queues_[AccountOf(context.job(id))].Add(
        id, backfill_.ClassOf(context, id), backfill_.walltime().Planned(context.job(id)));
  }

  void OnCompletion(SchedulingContext& context, JobId id) override {
    ledger_.Advance(context.now());
    Charge(context, id, -1);
    backfill_.OnCompletion(context, id);
  }

  // Back among its account's waiting jobs.
  void OnRequeue(SchedulingContext& context, JobId id) override {
    OnCompletion(context, id);
    queues_[AccountOf(context.job(id))].Readd(
        id, backfill_.ClassOf(context, id), backfill_.walltime().Planned(context.job(id)));
  }

  double RequestedWalltime(const Job& job) const override {
    return backfill_.walltime().Requested(job);
  }
  // Estimates only for backfill=easy: strict blocking plans nothing ahead.
  void BeforeRun(const Trace& trace, uint64_t seed) override {
    if (options_.backfill) backfill_.BeforeRun(trace, seed);
  }
  std::string PlanningEstimates() const override { return backfill_.walltime().Describe(); }

 private:
  // The job's account in the ledger, with a queue of its own from its first job on.
  int AccountOf(const Job& job) {
    const int account = ledger_.AccountOf(job);
    if (account >= static_cast<int>(queues_.size())) queues_.resize(account + 1);
    return account;
  }

  // A started job leaves its account's queue and adds its GPUs to the account's running GPUs.
  void OnStart(JobId id) {
    queues_[AccountOf(context_->job(id))].OnStart(id);
    Charge(*context_, id, +1);
  }

  // A started job adds its GPUs to its account's running GPUs; a finished one removes them.
  void Charge(const SchedulingContext& context, JobId id, int sign) {
    ledger_.Charge(AccountOf(context.job(id)), sign * context.active(id).request.gpus);
  }

  Options options_;
  const SchedulingContext* context_ = nullptr;  // during a pass
  FairShareLedger ledger_;                      // accounts in order of first arrival
  std::vector<QueueIndex> queues_;              // per account
  EasyBackfill backfill_;
  FairShareOrder order_;
};

// by, shares and half_life as the priority policy's fair-share ledger reads them; then backfill.
Options ParseOptions(const Params& params) {
  Options options;
  options.ledger = FairShareLedger::ParseOptions(params);
  const std::string backfill = params.String("backfill", "none");
  if (backfill != "none" && backfill != "easy") {
    throw InputError("parameter backfill=" + backfill + ": expected none or easy");
  }
  options.backfill = backfill == "easy";
  return options;
}

}  // namespace
}  // namespace clustersim

CLUSTERSIM_REGISTER_POLICY(
    fair_share, "fair-share",
    "Slurm-like fair-share: factor 2^(-U/S) per user or vc, decayed usage; blocking or EASY",
    "by (user): user | vc\n"
    "                           shares (equal): name:weight,... (an account not listed: 1)\n"
    "                           half_life (604800): usage half-life in seconds (inf: none)\n"
    "                           backfill (none): none = strict blocking | easy = EASY "
    "backfilling\n"
    "                           walltime (trace): trace | exact | a factor of the duration, as "
    "for easy",
    [](const clustersim::Params& params) {
      return std::make_unique<clustersim::FairShare>(clustersim::ParseOptions(params),
                                                     clustersim::WalltimeRule::FromParams(params));
    });
