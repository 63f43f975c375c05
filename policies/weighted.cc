// weighted: at each pass, the batch of starts that most improves a weighted, normalized
// multi-objective score (docs/policies.md#weighted; the terms, bounds and weight rule are stated
// there with a worked example).
//
// Terms, each to be minimized and normalized by its bounds at this pass to [0, 1] (0 = the best
// this pass can reach, 1 = starting nothing), over the waiting jobs Q (the first `scan` in
// submission order) and a decision D (the jobs started now, each on a GPU type t_j):
//   wait        sum_{Q\D} a_j / sum_Q a_j                  a_j = now - submit (+1 s): waiting that goes on
//   util        (F - sum_D n_j) / F                         F free GPUs, n_j a job's GPUs
//   throughput  1 - sum_D 1/d_j / sum_Q 1/d_j               d_j planned run time (completion rate)
//   energy      sum_D n_j e_j / sum_Q n_j                   e_j in [0, 1]: the job's energy on t_j
//                                                           between its best and worst GPU type
//   fair        (1 - J_D) / (1 - 1/|U|)                     J_D Jain's index over the users'
//                                                           GPUs held after D
//   sla         sum_{Q\D} u_j / sum_Q u_j                   u_j = 1 / (1 + slack_j / d_j), slack
//                                                           = deadline - now - d_j (>= 0)
// F(D) = sum_i w_i term_i(D), weights >= 0 normalized to sum 1. Dynamic weights (gamma > 0):
// w_i(t) = w_i x (1 + gamma (f_i(t) - mean_i) / sd_i), f_i(t) objective i's state before this
// pass's decision (docs/policies.md#weighted), mean_i and sd_i over the passes before; clamped at
// 0 and normalized again.
//
// A pass: (1) jobs waiting longer than `starvation` start first, in submission order, where they
// fit (there is no reservation: a large job may still wait long); (2) every other job of Q that
// fits in the free GPUs of some type it may use gets the value F(nothing) - F(it alone) per GPU
// type, and the `window` of greatest value (ties: submission order) are the candidates; (3) the batch allocator (sim/alloc) picks the jobs and
// nodes of the greatest total value under capacity, integrity, locality and node limits (with a
// node-aware placement, a job spans no more nodes than its size needs); (4) the batch starts if
// F(batch) < F(nothing), else the job of least value is dropped until it does (fairness is not
// additive).
// The allocators count GPUs only: under host limits a started job whose chosen nodes lack its
// CPUs or memory is placed by the run's placement on the same GPU type, or waits.
//
// Parameters: w_wait (0.3), w_util (0.3), w_throughput (0.2), w_energy (0), w_fair (0.1),
// w_sla (0.1), gamma (0), window (32), scan (256), starvation (86400 s), allocator (greedy):
// greedy | exact | ga | dp | auto, generations (60), population (40), time_limit (0.2 s, the
// exact allocator's limit per pass), walltime (trace): run-time estimates as for easy. The
// default allocator is first-fit decreasing: on the Philly window exact per-pass optima were far
// slower and no better over the run (docs/policies.md#weighted).
// Cost of a pass: O(scan x types) for the terms and values (the users' GPUs are kept between
// passes, updated at starts and ends; with gamma > 0 the running jobs' completion rate adds
// O(running)), O(nodes) for the allocation instance, and the allocator's cost on window jobs x
// nodes with free GPUs (docs/allocators.md).
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "policies/backfill.h"
#include "policies/registry.h"
#include "sim/alloc/batch_allocation.h"
#include "sim/engine/summary.h"
#include "sim/util/error.h"

namespace clustersim {
namespace {

enum Term { kWait, kUtil, kThroughput, kEnergy, kFair, kSla, kTerms };
constexpr const char* kTermNames[kTerms] = {"wait", "util", "throughput", "energy", "fair", "sla"};
constexpr double kDefaultWeights[kTerms] = {0.3, 0.3, 0.2, 0.0, 0.1, 0.1};

struct Options {
  double weights[kTerms];
  double gamma = 0;
  int window = 32;
  int scan = 256;
  double starvation_seconds = 86400;
  AllocatorOptions allocator;
};

// What a pass knows of the waiting jobs, for the terms.
struct State {
  double age_total = 0;         // sum_Q a_j
  double rate_total = 0;        // sum_Q 1/d_j
  double gpus_total = 0;        // sum_Q n_j
  double urgency_total = 0;     // sum_Q u_j
  double running_rate = 0;      // sum over running jobs of 1/d_j (for the dynamic weights only)
  int free = 0;                 // F
  // The users' GPUs held now, over the users with running jobs or waiting jobs in the scan: their
  // count, sum and sum of squares (whole GPUs, so the sums are exact integers in any order).
  int users = 0;
  int64_t held_sum = 0;
  int64_t held_squares = 0;
  const std::vector<int64_t>* held = nullptr;  // per user (Symbol::id): GPUs held now
};

struct Candidate {
  JobId id = kNoJob;
  int gpus = 0;
  uint32_t user = 0;  // Symbol::id
  double age = 0, rate = 0, urgency = 0;
  const double* energy = nullptr;  // per instance group: e_j in [0, 1]; < 0 = not usable
};

class Weighted final : public Policy {
 public:
  Weighted(Options options, WalltimeRule rule) : options_(options), rule_(rule) {}

  double RequestedWalltime(const Job& job) const override { return rule_.Requested(job); }

  bool PlacesMig() const override { return false; }  // docs/mig.md
  // Jobs without a wall time are planned with modelled user estimates unless walltime=exact, as
  // for easy (docs/backfilling.md#user-estimates).
  void BeforeRun(const Trace& trace, uint64_t seed) override {
    rule_.Prepare(trace, seed);
    counted_.assign(trace.jobs.size(), -1);
    counted_jobs_ = 0;
    energy_.assign(trace.jobs.size(), {});
  }

  // The per-user sums follow the running set: this policy's starts add, ends and requeues
  // (failures, out-of-memory retries) take away what the start added.
  void OnCompletion(SchedulingContext& /*context*/, JobId id) override { Uncount(id); }
  void OnRequeue(SchedulingContext& /*context*/, JobId id) override {
    Uncount(id);
    // An out-of-memory retry halves the batch, which changes the job's rates: weigh it anew.
    if (static_cast<size_t>(id) < energy_.size()) energy_[id].clear();
  }
  std::string PlanningEstimates() const override { return rule_.Describe(); }

  std::string IdleWarning(const Trace& trace, const ModelRuntime* /*models*/) const override {
    std::vector<std::string> idle;
    if (options_.weights[kSla] > 0) {
      bool any = false;
      for (const JobConstraints& c : trace.constraints) any = any || c.has_deadline();
      if (!any) idle.push_back("w_sla (no job has a deadline: --deadlines)");
    }
    if (options_.weights[kFair] > 0) {
      std::set<Symbol> users;
      for (const Job& job : trace.jobs) users.insert(job.user);
      if (users.size() <= 1) idle.push_back("w_fair (the trace names at most one user)");
    }
    if (idle.empty()) return "";
    return NothingToActOn(idle) + "; set those weights to 0 or give the trace what they weigh";
  }

  std::string PlacementWarning(const Cluster& cluster, const Placement& placement) const override {
    std::vector<std::string> idle;
    if (options_.weights[kEnergy] > 0 && cluster.gpu_types().size() <= 1) {
      idle.push_back("w_energy (the cluster has one GPU type: the energy term is 0 for every job)");
    }
    if (options_.allocator.kind == Allocator::kDp && !placement.IgnoresNodes()) {
      idle.push_back(
          "allocator=dp (with a node-aware placement each job keeps to the fewest nodes its size "
          "needs, a node limit the knapsack does not model, so every pass falls back to "
          "first-fit decreasing; use --placement pool or allocator=exact)");
    }
    return idle.empty() ? "" : NothingToActOn(idle);
  }

  void Schedule(SchedulingContext& context) override {
    if (context.QueueFront() == kNoJob) return;
    StartStarving(context);
    StartCpuOnly(context);
    const State state = Observe(context);
    const double* w = Weights(context, state);
    std::vector<Candidate> candidates;
    BatchInstance instance;
    std::vector<int> node_of;  // instance node -> cluster node
    Build(context, state, w, &candidates, &instance, &node_of);
    if (instance.jobs.empty()) return;
    const BatchSolution solution = Allocate(instance, options_.allocator);
    std::vector<int> chosen;
    for (size_t j = 0; j < instance.jobs.size(); ++j) {
      if (!solution.placement[j].empty()) chosen.push_back(static_cast<int>(j));
    }
    // Keep the batch only while it improves the score (fairness is not additive).
    auto group_of = [&](int j) { return instance.nodes[solution.placement[j][0].first].group; };
    const double nothing = Score(state, w, candidates, {}, {});
    while (!chosen.empty()) {
      std::vector<int> groups;
      for (int j : chosen) groups.push_back(group_of(j));
      if (Score(state, w, candidates, chosen, groups) < nothing) break;
      const auto least = std::min_element(chosen.begin(), chosen.end(), [&](int a, int b) {
        return instance.jobs[a].ValueIn(group_of(a)) < instance.jobs[b].ValueIn(group_of(b));
      });
      chosen.erase(least);
    }
    for (int j : chosen) {
      const JobId id = candidates[j].id;
      const int type = context.cluster().node(node_of[solution.placement[j][0].first]).gpu_type;
      Allocation allocation;
      if (OnChosenNodes(context, solution.placement[j], node_of, id, &allocation)) {
        allocation.gpu_type = type;
      } else {
        // The allocators count GPUs only: where the chosen nodes lack the job's CPUs or host
        // memory (or a job placed this way took their GPUs), or the job has rules of its own,
        // the run's placement finds it room on the same GPU type, or it waits.
        allocation = Allocation{};
        if (!context.placement().Find(context.resources(), OnType(context.active(id).request, type),
                                      &allocation)) {
          continue;
        }
      }
      Begin(context, id, std::move(allocation));
    }
  }

 private:
  // "weighted: nothing to act on for A; B": the warning of the settings in `idle` (not empty).
  static std::string NothingToActOn(const std::vector<std::string>& idle) {
    std::string text = "weighted: nothing to act on for";
    for (size_t i = 0; i < idle.size(); ++i) text += (i ? "; " : " ") + idle[i];
    return text;
  }

  // The allocator's nodes for the job, if they still have its GPUs free and its host demand fits.
  // The allocators count GPUs per node only: a request with rules of its own (placement
  // constraints, anti-affinity among them; tensor-parallel groups; whole nodes) goes to the run's
  // placement, which keeps them.
  static bool OnChosenNodes(const SchedulingContext& context,
                            const std::vector<std::pair<int, int>>& parts,
                            const std::vector<int>& node_of, JobId id, Allocation* allocation) {
    const PlacementRequest& request = context.active(id).request;
    if (request.constraint != 0 || HasGroupRule(request)) return false;
    const Resources& resources = context.resources();
    for (const auto& [node, gpus] : parts) {
      if (resources.free_gpus(node_of[node]) < gpus) return false;
    }
    for (const auto& [node, gpus] : parts) {
      resources.AppendLowestFreeGpus(node_of[node], gpus, &allocation->gpus);
    }
    std::sort(allocation->gpus.begin(), allocation->gpus.end());
    return resources.HostFitsGpus(request.host, allocation->gpus, 0);
  }

  // Starts the job and counts its GPUs for its user.
  void Begin(SchedulingContext& context, JobId id, Allocation allocation) {
    context.Start(id, std::move(allocation));
    if (context.run(id).state != JobState::kRunning) return;
    Count(context.job(id).user.id(), id,
          static_cast<int>(context.active(id).allocation.gpus.size()));
  }

  void Count(uint32_t user, JobId id, int gpus) {
    if (user >= held_.size()) {
      held_.resize(user + 1, 0);
      running_of_.resize(user + 1, 0);
      seen_.resize(user + 1, 0);
    }
    if (static_cast<size_t>(id) >= counted_.size()) counted_.resize(id + 1, -1);
    if (counted_user_.size() < counted_.size()) counted_user_.resize(counted_.size(), 0);
    counted_[id] = gpus;
    counted_user_[id] = user;
    ++counted_jobs_;
    if (running_of_[user]++ == 0) ++running_users_;
    held_squares_ -= held_[user] * held_[user];
    held_[user] += gpus;
    held_squares_ += held_[user] * held_[user];
    held_sum_ += gpus;
  }

  void Uncount(JobId id) {
    if (id < 0 || static_cast<size_t>(id) >= counted_.size() || counted_[id] < 0) return;
    const uint32_t user = counted_user_[id];
    const int gpus = counted_[id];
    counted_[id] = -1;
    --counted_jobs_;
    if (--running_of_[user] == 0) --running_users_;
    held_squares_ -= held_[user] * held_[user];
    held_[user] -= gpus;
    held_squares_ += held_[user] * held_[user];
    held_sum_ -= gpus;
  }

  // Counts the running set anew; only when the counted jobs differ from it (a start or stop
  // this policy was not told of), so that the sums are never stale.
  void Recount(const SchedulingContext& context) {
    for (JobId id = 0; id < static_cast<JobId>(counted_.size()); ++id) Uncount(id);
    for (JobId id : context.running()) {
      Count(context.job(id).user.id(), id,
            static_cast<int>(context.active(id).allocation.gpus.size()));
    }
  }

  // Step 1: jobs waiting longer than `starvation` start first, in submission order, where they
  // fit (no reservation: one that does not fit waits on).
  void StartStarving(SchedulingContext& context) {
    const double now = context.now();
    Allocation allocation;
    for (JobId id = context.QueueFront(); id != kNoJob;) {
      const JobId next = context.QueueNext(id);
      if (now - context.job(id).submit_time <= options_.starvation_seconds) break;
      if (context.TryPlace(id, &allocation)) Begin(context, id, std::move(allocation));
      id = next;
    }
  }

  // CPU-only jobs (docs/resources.md#cpu-only-jobs) hold no GPU, so no term of the objective
  // weighs them: the first `scan` waiting ones start in submission order where the placement puts
  // them.
  void StartCpuOnly(SchedulingContext& context) {
    Allocation allocation;
    int scanned = 0;
    for (JobId id = context.QueueFront(); id != kNoJob && scanned < options_.scan; ++scanned) {
      const JobId next = context.QueueNext(id);
      if (IsCpuOnly(context.active(id).request) && context.TryPlace(id, &allocation)) {
        Begin(context, id, std::move(allocation));
      }
      id = next;
    }
  }

  // O(scan) with gamma = 0; the dynamic weights' completion rate walks the running jobs.
  State Observe(const SchedulingContext& context) {
    State s;
    const double now = context.now();
    s.free = context.resources().total_free();
    if (counted_jobs_ != static_cast<int64_t>(context.running().size())) Recount(context);
    if (options_.gamma > 0) {
      for (JobId id : context.running()) {
        s.running_rate += 1 / std::max(1.0, rule_.Planned(context.job(id)));
      }
    }
    s.users = running_users_;
    s.held_sum = held_sum_;
    s.held_squares = held_squares_;
    s.held = &held_;
    ++pass_;
    int scanned = 0;
    for (JobId id = context.QueueFront(); id != kNoJob && scanned < options_.scan;
         id = context.QueueNext(id), ++scanned) {
      const Job& job = context.job(id);
      s.age_total += now - job.submit_time + 1;
      s.rate_total += 1 / std::max(1.0, rule_.Planned(job));
      s.gpus_total += job.gpus;
      s.urgency_total += Urgency(context, id);
      const uint32_t user = job.user.id();
      if (user >= held_.size()) {
        held_.resize(user + 1, 0);
        running_of_.resize(user + 1, 0);
        seen_.resize(user + 1, 0);
      }
      if (running_of_[user] == 0 && seen_[user] != pass_) ++s.users;  // holds 0 GPUs
      seen_[user] = pass_;
    }
    return s;
  }

  static double Urgency(const SchedulingContext& context, JobId id) {
    const double deadline = context.deadline(id);
    if (!std::isfinite(deadline)) return 0;
    const double d = std::max(1.0, context.job(id).duration);
    const double slack = std::max(0.0, deadline - context.now() - d);
    return 1 / (1 + slack / d);
  }

  // The weights of this pass: the base ones, adapted by the dynamic rule when gamma > 0.
  const double* Weights(const SchedulingContext& context, const State& state) {
    double base[kTerms];
    std::copy(std::begin(options_.weights), std::end(options_.weights), base);
    if (options_.gamma <= 0) {
      std::copy(base, base + kTerms, weights_);
      return weights_;
    }
    // f_i(t): each objective's state before the decision, oriented so that larger is worse
    // (docs/policies.md#weighted): the queue's mean age, the idle share, minus the running jobs'
    // completion rate, 0 for energy (its term has no state before a decision: its weight stays),
    // the unfairness term, the queue's mean urgency.
    const int queued = std::max(1, context.QueueLength());
    const double f[kTerms] = {
        state.age_total / queued,
        static_cast<double>(state.free) / std::max(1, context.cluster().total_gpus()),
        -state.running_rate,
        0.0,
        FairTerm(state.users, state.held_sum, state.held_squares),
        state.urgency_total / queued};
    double sum = 0;
    for (int i = 0; i < kTerms; ++i) {
      History& h = history_[i];
      const double sd = h.count > 1 ? std::sqrt(h.m2 / (h.count - 1)) : 0;
      double wi = base[i];
      if (sd > 0) wi *= 1 + options_.gamma * (f[i] - h.mean) / sd;
      weights_[i] = std::max(0.0, wi);
      sum += weights_[i];
      // Welford's update, after the weight used the history before this pass.
      ++h.count;
      const double delta = f[i] - h.mean;
      h.mean += delta / h.count;
      h.m2 += delta * (f[i] - h.mean);
    }
    if (sum > 0) {
      for (double& wi : weights_) wi /= sum;
    } else {
      std::copy(base, base + kTerms, weights_);
    }
    return weights_;
  }

  // (1 - J) / (1 - 1/|U|), J Jain's index (sim/engine/summary.h's JainIndex) over `users`
  // users holding `sum` GPUs with `squares` the sum of their squares: whole GPUs, so the sums
  // are exact and J is the value JainIndex gives on the list of shares.
  static double FairTerm(int users, int64_t sum, int64_t squares) {
    if (users <= 1) return 0;
    const double s = static_cast<double>(sum);
    const double sq = static_cast<double>(squares);
    const double jain = sq == 0 ? 1.0 : s * s / (static_cast<size_t>(users) * sq);
    return (1 - jain) / (1 - 1.0 / static_cast<size_t>(users));
  }

  // F(D) for the candidates `chosen`, each on its instance group. O(|D|): the fairness sums
  // change by the users D touches.
  double Score(const State& state, const double* w, const std::vector<Candidate>& candidates,
               const std::vector<int>& chosen, const std::vector<int>& groups) const {
    double age = 0, rate = 0, gpus = 0, urgency = 0, energy = 0;
    int64_t held_sum = state.held_sum;
    int64_t held_squares = state.held_squares;
    std::vector<std::pair<uint32_t, int64_t>>& added = score_added_;  // (user, GPUs D adds)
    added.clear();
    for (size_t k = 0; k < chosen.size(); ++k) {
      const Candidate& c = candidates[chosen[k]];
      age += c.age;
      rate += c.rate;
      gpus += c.gpus;
      urgency += c.urgency;
      energy += c.gpus * std::max(0.0, c.energy[groups[k]]);
      held_sum += c.gpus;
      bool found = false;
      for (auto& [user, more] : added) {
        if (user == c.user) {
          more += c.gpus;
          found = true;
        }
      }
      if (!found) added.emplace_back(c.user, c.gpus);
    }
    for (const auto& [user, more] : added) {
      const int64_t before = user < state.held->size() ? (*state.held)[user] : 0;
      held_squares += (before + more) * (before + more) - before * before;
    }
    return Combine(state, w, age, rate, gpus, urgency, energy, held_sum, held_squares);
  }

  // F({c}) for one candidate on group g: Score's sums of one term each, without its lists.
  double ScoreOne(const State& state, const double* w, const Candidate& c, int g) const {
    const int64_t before = c.user < state.held->size() ? (*state.held)[c.user] : 0;
    const int64_t squares = state.held_squares + (before + c.gpus) * (before + c.gpus) -
                            before * before;
    return Combine(state, w, c.age, c.rate, c.gpus, c.urgency,
                   c.gpus * std::max(0.0, c.energy[g]), state.held_sum + c.gpus, squares);
  }

  // sum_i w_i term_i from a decision's sums.
  static double Combine(const State& state, const double* w, double age, double rate,
                        double gpus, double urgency, double energy, int64_t held_sum,
                        int64_t held_squares) {
    double term[kTerms] = {};
    term[kWait] = state.age_total > 0 ? 1 - age / state.age_total : 0;
    term[kUtil] = state.free > 0 ? 1 - gpus / state.free : 0;
    term[kThroughput] = state.rate_total > 0 ? 1 - rate / state.rate_total : 0;
    term[kEnergy] = state.gpus_total > 0 ? energy / state.gpus_total : 0;
    term[kFair] = FairTerm(state.users, held_sum, held_squares);
    term[kSla] = state.urgency_total > 0 ? 1 - urgency / state.urgency_total : 0;
    double score = 0;
    for (int i = 0; i < kTerms; ++i) score += w[i] * term[i];
    return score;
  }

  // Step 2: the window's candidates, their values per group, and the allocation instance.
  void Build(const SchedulingContext& context, const State& state, const double* w,
             std::vector<Candidate>* candidates, BatchInstance* instance,
             std::vector<int>* node_of) const {
    const Resources& resources = context.resources();
    const Cluster& cluster = context.cluster();
    const bool pooled = context.placement().IgnoresNodes();
    // Groups: partitions (node-aware placements keep a job in one), or GPU types (pool).
    const auto& partitions = resources.partitions();
    std::vector<int> group_of_partition(partitions.size());
    std::vector<int> group_type;
    for (size_t p = 0; p < partitions.size(); ++p) {
      int g = -1;
      if (pooled) {
        for (size_t k = 0; k < group_type.size(); ++k) {
          if (group_type[k] == partitions[p].gpu_type) g = static_cast<int>(k);
        }
      }
      if (g < 0) {
        g = static_cast<int>(group_type.size());
        group_type.push_back(partitions[p].gpu_type);
      }
      group_of_partition[p] = g;
    }
    std::vector<int> instance_node(cluster.node_count(), -1);
    instance->nodes.reserve(cluster.node_count());
    node_of->reserve(cluster.node_count());
    for (size_t p = 0; p < partitions.size(); ++p) {
      for (int node : partitions[p].nodes) {
        if (resources.free_gpus(node) <= 0) continue;
        instance_node[node] = static_cast<int>(instance->nodes.size());
        instance->nodes.push_back({resources.free_gpus(node), group_of_partition[p]});
        node_of->push_back(node);
      }
    }
    if (instance->nodes.empty()) return;
    const int groups = static_cast<int>(group_type.size());
    instance->group_count = groups;
    const double nothing = Score(state, w, {}, {}, {});
    const double now = context.now();
    int scanned = 0;
    for (JobId id = context.QueueFront(); id != kNoJob && scanned < options_.scan;
         id = context.QueueNext(id), ++scanned) {
      const Job& job = context.job(id);
      const PlacementRequest& request = context.active(id).request;
      if (request.gpus <= 0 || request.gpus > MostFreeOfOneType(resources, request)) continue;
      Candidate c;
      c.id = id;
      c.gpus = request.gpus;
      c.user = job.user.id();
      c.age = now - job.submit_time + 1;
      c.rate = 1 / std::max(1.0, rule_.Planned(job));
      c.urgency = Urgency(context, id);
      c.energy = EnergyOf(context, id, group_type).data();
      AllocJob a;
      a.gpus = request.gpus;
      a.value_in_group.assign(groups, 0.0);
      candidates->push_back(c);
      bool any = false;
      for (int g = 0; g < groups; ++g) {
        if (c.energy[g] < 0) continue;
        const double value = nothing - ScoreOne(state, w, candidates->back(), g);
        a.value_in_group[g] = value;
        any = any || value > 0;
      }
      if (!any) {
        candidates->pop_back();
        continue;
      }
      a.value = *std::max_element(a.value_in_group.begin(), a.value_in_group.end());
      const NodeLimits& limits = context.node_limits(id);
      for (int d : limits.data_nodes) {
        if (instance_node[d] >= 0) a.limits.data_nodes.push_back(instance_node[d]);
      }
      std::sort(a.limits.data_nodes.begin(), a.limits.data_nodes.end());
      a.limits.alpha = limits.alpha;
      if (a.limits.data_nodes.empty() && LocalityNeed(limits.alpha, request.gpus) > 0 &&
          !limits.data_nodes.empty()) {
        candidates->pop_back();  // its data nodes have no free GPU: it cannot start now
        continue;
      }
      a.limits.max_nodes = limits.max_nodes;
      if (!pooled) {
        // Node-aware placements take the fewest nodes a request needs: no more here either.
        int fewest = 0;
        for (size_t p = 0; p < partitions.size(); ++p) {
          if (!request.AllowsType(partitions[p].gpu_type)) continue;
          const int g = partitions[p].gpus_per_node;
          fewest = std::max(fewest, (request.gpus + g - 1) / g);
        }
        if (fewest > 0) {
          a.limits.max_nodes = a.limits.max_nodes > 0 ? std::min(a.limits.max_nodes, fewest) : fewest;
        }
      }
      instance->jobs.push_back(std::move(a));
    }
    if (static_cast<int>(instance->jobs.size()) <= options_.window) return;
    // The `window` most valuable, kept in submission order.
    std::vector<int> keep(instance->jobs.size());
    std::iota(keep.begin(), keep.end(), 0);
    std::stable_sort(keep.begin(), keep.end(), [&](int a, int b) {
      return instance->jobs[a].value > instance->jobs[b].value;
    });
    keep.resize(options_.window);
    std::sort(keep.begin(), keep.end());
    std::vector<Candidate> kept_candidates;
    std::vector<AllocJob> kept_jobs;
    for (int k : keep) {
      kept_candidates.push_back(std::move((*candidates)[k]));
      kept_jobs.push_back(std::move(instance->jobs[k]));
    }
    *candidates = std::move(kept_candidates);
    instance->jobs = std::move(kept_jobs);
  }

  // Energy of the job's work per group: GPUs x TDP x run time on the group's type; scaled
  // between the job's best and worst usable type (-1: not usable). Kept per job while the
  // groups' types stay: a waiting job's request and rates change only by an out-of-memory retry
  // (OnRequeue forgets it).
  const std::vector<double>& EnergyOf(const SchedulingContext& context, JobId id,
                                      const std::vector<int>& group_type) const {
    if (group_type != energy_types_) {
      for (std::vector<double>& e : energy_) e.clear();
      energy_types_ = group_type;
    }
    if (static_cast<size_t>(id) >= energy_.size()) energy_.resize(id + 1);
    std::vector<double>& energy = energy_[id];
    if (!energy.empty()) return energy;
    const Job& job = context.job(id);
    const PlacementRequest& request = context.active(id).request;
    const Cluster& cluster = context.cluster();
    const int groups = static_cast<int>(group_type.size());
    std::vector<double> joules(groups, -1);
    double lo = std::numeric_limits<double>::infinity(), hi = 0;
    for (int g = 0; g < groups; ++g) {
      const int t = group_type[g];
      const double rate = request.AllowsType(t) ? context.TypeRate(id, t) : 0;
      if (!(rate > 0)) continue;
      joules[g] = request.gpus * cluster.catalog().gpu(t).tdp_watts * job.duration / rate;
      lo = std::min(lo, joules[g]);
      hi = std::max(hi, joules[g]);
    }
    energy.assign(groups, -1);
    for (int g = 0; g < groups; ++g) {
      if (joules[g] >= 0) energy[g] = hi > lo ? (joules[g] - lo) / (hi - lo) : 0;
    }
    return energy;
  }

  struct History {
    int64_t count = 0;
    double mean = 0;
    double m2 = 0;
  };

  Options options_;
  WalltimeRule rule_;
  double weights_[kTerms] = {};
  History history_[kTerms];
  // The running jobs this policy started, per user (by Symbol::id), kept between passes.
  std::vector<int> counted_;            // per job: GPUs counted for its user, -1 = not running
  std::vector<uint32_t> counted_user_;  // per job: the user counted
  int64_t counted_jobs_ = 0;
  std::vector<int64_t> held_;     // per user: GPUs held by running jobs
  std::vector<int> running_of_;   // per user: running jobs
  std::vector<uint64_t> seen_;    // per user: the last pass whose scan saw a waiting job of it
  uint64_t pass_ = 0;
  int running_users_ = 0;
  int64_t held_sum_ = 0;
  int64_t held_squares_ = 0;
  mutable std::vector<std::pair<uint32_t, int64_t>> score_added_;
  mutable std::vector<std::vector<double>> energy_;  // per job: EnergyOf's answer, empty = none
  mutable std::vector<int> energy_types_;            // the groups' GPU types it was made for
};

Options ParseOptions(const Params& params) {
  Options o;
  double sum = 0;
  for (int i = 0; i < kTerms; ++i) {
    const std::string key = std::string("w_") + kTermNames[i];
    o.weights[i] = params.Double(key, kDefaultWeights[i]);
    if (!(o.weights[i] >= 0) || !std::isfinite(o.weights[i])) {
      throw InputError("parameter " + key + ": expected a weight >= 0");
    }
    sum += o.weights[i];
  }
  if (!(sum > 0)) throw InputError("weighted: the weights w_* add up to 0; give one > 0");
  for (double& w : o.weights) w /= sum;
  o.gamma = params.Double("gamma", 0);
  if (!(o.gamma >= 0) || !std::isfinite(o.gamma)) {
    throw InputError("parameter gamma: expected a number >= 0");
  }
  o.window = params.Int("window", 32);
  if (o.window < 1 || o.window > 4096) throw InputError("parameter window: expected 1 to 4096");
  o.scan = params.Int("scan", 256);
  if (o.scan < o.window || o.scan > 1'000'000) {
    throw InputError("parameter scan: expected window to 1000000");
  }
  o.starvation_seconds = params.Double("starvation", 86400);
  if (!(o.starvation_seconds > 0)) throw InputError("parameter starvation: expected seconds > 0");
  const std::string allocator = params.String("allocator", "greedy");
  const auto kind = ParseAllocator(allocator);
  if (!kind) {
    throw InputError("parameter allocator=" + allocator + ": expected " + kAllocatorNames);
  }
  o.allocator.kind = *kind;
  o.allocator.genetic.generations = params.Int("generations", 60);
  o.allocator.genetic.population = params.Int("population", 40);
  if (o.allocator.genetic.generations < 0 || o.allocator.genetic.population < 2) {
    throw InputError("parameters generations >= 0 and population >= 2 expected");
  }
  o.allocator.time_limit_seconds = params.Double("time_limit", 0.2);
  if (!(o.allocator.time_limit_seconds > 0)) {
    throw InputError("parameter time_limit: expected seconds > 0");
  }
  return o;
}

}  // namespace
}  // namespace clustersim

CLUSTERSIM_REGISTER_POLICY(
    weighted, "weighted",
    "each pass starts the batch that most improves a weighted normalized score (wait, util, "
    "throughput, energy, fairness, SLA)",
    "w_wait (0.3), w_util (0.3), w_throughput (0.2), w_energy (0), w_fair (0.1), w_sla (0.1):\n"
    "                           weights >= 0, normalized to sum 1 (docs/policies.md#weighted)\n"
    "                           gamma (0): dynamic weights, w_i x (1 + gamma x z-score of term i)\n"
    "                           window (32): candidates per pass, the most valuable\n"
    "                           scan (256): waiting jobs looked at per pass, oldest first\n"
    "                           starvation (86400): seconds after which a job goes first\n"
    "                           allocator (greedy): greedy | exact | ga | dp | auto\n"
    "                           generations (60), population (40): the ga allocator's\n"
    "                           time_limit (0.2): seconds per exact solve\n"
    "                           walltime (trace): run-time estimates, as for easy",
    [](const clustersim::Params& params) {
      return std::make_unique<clustersim::Weighted>(clustersim::ParseOptions(params),
                                                    clustersim::WalltimeRule::FromParams(params));
    });
