#include "sim/alloc/batch_allocation.h"

#include <glpk.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>

#include "sim/alloc/genetic.h"
#include "sim/alloc/glpk_lock.h"
#include "sim/util/error.h"

namespace clustersim {
namespace {

struct ProblemDeleter {
  void operator()(glp_prob* p) const { glp_delete_prob(p); }
};

double SolutionValue(const BatchInstance& instance, const BatchSolution& solution) {
  double value = 0;
  for (size_t j = 0; j < instance.jobs.size(); ++j) {
    const auto& parts = solution.placement[j];
    if (!parts.empty()) value += instance.jobs[j].ValueIn(instance.nodes[parts[0].first].group);
  }
  return value;
}

}  // namespace

bool AllocJob::MayUse(int group) const {
  if (!value_in_group.empty() && !(value_in_group[group] > 0)) return false;
  return groups.empty() || std::binary_search(groups.begin(), groups.end(), group);
}

int BatchInstance::groups() const {
  int g = group_count;
  for (const AllocNode& node : nodes) g = std::max(g, node.group + 1);
  return g;
}

void CheckBatchInstance(const BatchInstance& instance) {
  const int nodes = static_cast<int>(instance.nodes.size());
  const int groups = instance.groups();
  for (int i = 0; i < nodes; ++i) {
    if (instance.nodes[i].free < 0 || instance.nodes[i].group < 0) {
      throw InputError("allocation instance: node " + std::to_string(i) +
                       " has negative free GPUs or group");
    }
  }
  for (size_t j = 0; j < instance.jobs.size(); ++j) {
    const AllocJob& job = instance.jobs[j];
    const std::string where = "allocation instance: job " + std::to_string(j);
    if (job.gpus < 1) throw InputError(where + ": expected at least 1 GPU");
    if (!std::isfinite(job.value)) throw InputError(where + ": value is not finite");
    if (!job.value_in_group.empty() && static_cast<int>(job.value_in_group.size()) != groups) {
      throw InputError(where + ": expected one value per group");
    }
    for (int g : job.groups) {
      if (g < 0 || g >= groups) throw InputError(where + ": group out of range");
    }
    for (int d : job.limits.data_nodes) {
      if (d < 0 || d >= nodes) throw InputError(where + ": data node out of range");
    }
    if (!(job.limits.alpha >= 0 && job.limits.alpha <= 1) || job.limits.max_nodes < 0) {
      throw InputError(where + ": expected alpha in [0, 1] and max_nodes >= 0");
    }
  }
}

std::string CheckBatchSolution(const BatchInstance& instance, const BatchSolution& solution) {
  if (solution.placement.size() != instance.jobs.size()) return "one placement per job expected";
  std::vector<int> used(instance.nodes.size(), 0);
  for (size_t j = 0; j < instance.jobs.size(); ++j) {
    const AllocJob& job = instance.jobs[j];
    const auto& parts = solution.placement[j];
    if (parts.empty()) continue;
    const std::string where = "job " + std::to_string(j) + ": ";
    int total = 0;
    const int group = instance.nodes[parts[0].first].group;
    for (size_t k = 0; k < parts.size(); ++k) {
      const auto [node, gpus] = parts[k];
      if (node < 0 || node >= static_cast<int>(instance.nodes.size()) || gpus <= 0) {
        return where + "a part outside the nodes or empty";
      }
      if (k > 0 && node <= parts[k - 1].first) return where + "nodes not ascending";
      if (instance.nodes[node].group != group) return where + "spans two groups";
      used[node] += gpus;
      total += gpus;
    }
    if (!job.MayUse(group)) return where + "in a group it may not use";
    if (total != job.gpus) {
      return where + std::to_string(total) + " GPUs for a request of " + std::to_string(job.gpus);
    }
    if (std::string why = CheckNodeLimits(parts, job.limits); !why.empty()) return where + why;
  }
  for (size_t i = 0; i < used.size(); ++i) {
    if (used[i] > instance.nodes[i].free) {
      return "node " + std::to_string(i) + " over-committed: " + std::to_string(used[i]) + " of " +
             std::to_string(instance.nodes[i].free);
    }
  }
  const double value = SolutionValue(instance, solution);
  if (std::abs(value - solution.value) > 1e-9 * std::max(1.0, std::abs(value))) {
    return "value " + std::to_string(solution.value) + " is not its jobs' " + std::to_string(value);
  }
  return "";
}

namespace {

// The nodes of each group with free GPUs, fullest first (ties: lower node index), kept in that
// order while the jobs of an order take GPUs: a job without data nodes then takes its group's
// first nodes (SpreadOverNodes' choice, without building and sorting its offers for every job).
class FullnessOrder {
 public:
  FullnessOrder(const BatchInstance& instance, const std::vector<int>& free)
      : instance_(instance), free_(free), nodes_(instance.groups()), total_(instance.groups(), 0) {
    // Fullest first: by free GPUs, a counting sort when the counts are few (nodes ascending
    // within each count), else a comparison sort.
    int most = 0;
    for (int f : free) most = std::max(most, f);
    const size_t n = instance.nodes.size();
    if (static_cast<size_t>(most) <= 2 * n + 64) {
      // start[k]: where the nodes of most - k free GPUs begin in the fullest-first order.
      std::vector<int> start(most + 2, 0);
      for (size_t i = 0; i < n; ++i) {
        if (free[i] > 0) ++start[most - free[i] + 1];
      }
      for (int k = 1; k <= most; ++k) start[k] += start[k - 1];
      std::vector<int> sorted(start[most]);
      for (size_t i = 0; i < n; ++i) {
        if (free[i] > 0) sorted[start[most - free[i]]++] = static_cast<int>(i);
      }
      for (int i : sorted) nodes_[instance.nodes[i].group].push_back(i);
    } else {
      for (size_t i = 0; i < n; ++i) {
        if (free[i] > 0) nodes_[instance.nodes[i].group].push_back(static_cast<int>(i));
      }
      for (std::vector<int>& v : nodes_) {
        std::sort(v.begin(), v.end(),
                  [&](int a, int b) { return Key(a, free[a]) > Key(b, free[b]); });
      }
    }
    for (size_t i = 0; i < n; ++i) {
      if (free[i] > 0) total_[instance.nodes[i].group] += free[i];
    }
  }

  // SpreadOverNodes(group's offers, gpus, 0, max_nodes) for a job with no data node: the fewest
  // fullest nodes that hold its GPUs, at most max_nodes (0 = no limit); empty if none.
  std::vector<std::pair<int, int>> Spread(int group, int gpus, int max_nodes) const {
    std::vector<std::pair<int, int>> out;
    if (total_[group] < gpus) return out;
    int left = gpus;
    for (int node : nodes_[group]) {
      if (max_nodes > 0 && static_cast<int>(out.size()) == max_nodes) return {};
      const int take = std::min(left, free_[node]);
      out.emplace_back(node, take);
      left -= take;
      if (left == 0) break;
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  // `gpus` of `node` taken: called before the caller lowers free[node] by them.
  void Take(int node, int gpus) {
    std::vector<int>& v = nodes_[instance_.nodes[node].group];
    total_[instance_.nodes[node].group] -= gpus;
    const auto at = std::lower_bound(v.begin(), v.end(), node, [&](int a, int b) {
      return Key(a, free_[a]) > Key(b, free_[b]);
    });
    const int after = free_[node] - gpus;
    if (after == 0) {
      v.erase(at);
      return;
    }
    // Less free now: it moves towards the end, past the nodes now fuller than it.
    const auto to = std::lower_bound(at + 1, v.end(), node, [&](int a, int b) {
      return Key(a, free_[a]) > Key(b, b == node ? after : free_[b]);
    });
    std::rotate(at, at + 1, to);
  }

 private:
  // Fuller first: more free GPUs, then the lower index.
  static std::pair<int, int> Key(int node, int free) { return {free, -node}; }

  const BatchInstance& instance_;
  const std::vector<int>& free_;
  std::vector<std::vector<int>> nodes_;  // per group
  std::vector<long long> total_;         // per group: free GPUs
};

std::vector<std::pair<int, int>> PlaceJobIn(const BatchInstance& instance,
                                            const std::vector<int>& free,
                                            const FullnessOrder& order, int j) {
  const AllocJob& job = instance.jobs[j];
  const int groups = instance.groups();
  std::vector<int> tried(groups);
  std::iota(tried.begin(), tried.end(), 0);
  std::stable_sort(tried.begin(), tried.end(),
                   [&](int a, int b) { return job.ValueIn(a) > job.ValueIn(b); });
  const int need = LocalityNeed(job.limits.alpha, job.gpus);
  std::vector<NodeOffer> offers;
  for (int g : tried) {
    if (!job.MayUse(g)) continue;
    std::vector<std::pair<int, int>> parts;
    if (job.limits.data_nodes.empty()) {
      parts = order.Spread(g, job.gpus, job.limits.max_nodes);
    } else {
      offers.clear();
      for (size_t i = 0; i < instance.nodes.size(); ++i) {
        if (instance.nodes[i].group != g || free[i] <= 0) continue;
        offers.push_back(
            {static_cast<int>(i), free[i], job.limits.IsDataNode(static_cast<int>(i))});
      }
      parts = SpreadOverNodes(offers, job.gpus, need, job.limits.max_nodes);
    }
    if (!parts.empty()) return parts;
  }
  return {};
}

}  // namespace

std::vector<std::pair<int, int>> PlaceJob(const BatchInstance& instance,
                                          const std::vector<int>& free, int j) {
  return PlaceJobIn(instance, free, FullnessOrder(instance, free), j);
}

BatchSolution AllocateInOrder(const BatchInstance& instance, const std::vector<int>& order) {
  BatchSolution out;
  out.placement.resize(instance.jobs.size());
  std::vector<int> free(instance.nodes.size());
  for (size_t i = 0; i < free.size(); ++i) free[i] = instance.nodes[i].free;
  FullnessOrder fullness(instance, free);
  for (int j : order) {
    auto parts = PlaceJobIn(instance, free, fullness, j);
    if (parts.empty()) continue;
    for (const auto& [node, gpus] : parts) {
      fullness.Take(node, gpus);
      free[node] -= gpus;
    }
    out.value += instance.jobs[j].ValueIn(instance.nodes[parts[0].first].group);
    out.placement[j] = std::move(parts);
  }
  return out;
}

namespace {

// First-fit decreasing's order: GPUs descending, then value descending, then index.
std::vector<int> DecreasingJobs(const BatchInstance& instance) {
  std::vector<int> order(instance.jobs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    const AllocJob& x = instance.jobs[a];
    const AllocJob& y = instance.jobs[b];
    return x.gpus != y.gpus ? x.gpus > y.gpus : x.value > y.value;
  });
  return order;
}

}  // namespace

BatchSolution GreedyAllocate(const BatchInstance& instance) {
  return AllocateInOrder(instance, DecreasingJobs(instance));
}

BatchSolution GeneticAllocate(const BatchInstance& instance, const GeneticOptions& options) {
  const int n = static_cast<int>(instance.jobs.size());
  BatchSolution best;
  if (n == 0) {
    best.placement.clear();
    return best;
  }
  EvolveOrders(
      n, DecreasingJobs(instance), options,
      [&](const std::vector<int>& order, BatchSolution* decoded) {
        *decoded = AllocateInOrder(instance, order);
        return decoded->value;
      },
      &best);
  return best;
}

bool IsOneDimensional(const BatchInstance& instance) {
  if (instance.groups() > 1) return false;
  for (const AllocJob& job : instance.jobs) {
    if ((!job.limits.data_nodes.empty() && job.limits.alpha > 0) || job.limits.max_nodes > 0) {
      return false;
    }
  }
  return true;
}

std::optional<BatchSolution> DpAllocate(const BatchInstance& instance) {
  if (!IsOneDimensional(instance)) return std::nullopt;
  const int n = static_cast<int>(instance.jobs.size());
  int capacity = 0;
  for (const AllocNode& node : instance.nodes) capacity += node.free;
  // best[j][c] = the most value from jobs 0..j-1 within c GPUs; kept per job for the walk back.
  std::vector<std::vector<double>> best(n + 1, std::vector<double>(capacity + 1, 0.0));
  for (int j = 0; j < n; ++j) {
    const AllocJob& job = instance.jobs[j];
    const bool usable = instance.nodes.empty() ? false : job.MayUse(0);
    const double value = usable ? job.ValueIn(0) : 0;
    for (int c = 0; c <= capacity; ++c) {
      best[j + 1][c] = best[j][c];
      if (usable && value > 0 && job.gpus <= c) {
        best[j + 1][c] = std::max(best[j + 1][c], best[j][c - job.gpus] + value);
      }
    }
  }
  std::vector<int> chosen;
  for (int j = n, c = capacity; j > 0; --j) {
    if (best[j][c] != best[j - 1][c]) {
      chosen.push_back(j - 1);
      c -= instance.jobs[j - 1].gpus;
    }
  }
  std::reverse(chosen.begin(), chosen.end());
  // Any set within the free GPUs fits: fill the nodes in order.
  BatchSolution out = AllocateInOrder(instance, chosen);
  CHECK(std::abs(out.value - best[n][capacity]) <= 1e-9 * std::max(1.0, out.value),
        "knapsack DP: the chosen jobs do not all fit");
  out.optimal = true;
  return out;
}

std::optional<BatchSolution> ExactAllocate(const BatchInstance& instance,
                                           double time_limit_seconds) {
  CheckBatchInstance(instance);
  const int n = static_cast<int>(instance.jobs.size());
  const int nodes = static_cast<int>(instance.nodes.size());
  const int groups = instance.groups();
  BatchSolution out;
  out.placement.resize(n);
  out.optimal = true;
  std::lock_guard<std::mutex> lock(GlpkMutex());
  glp_term_out(GLP_OFF);
  std::unique_ptr<glp_prob, ProblemDeleter> lp(glp_create_prob());
  glp_set_obj_dir(lp.get(), GLP_MAX);
  auto add_col = [&](int kind, double lo, double hi, double cost) {
    const int col = glp_add_cols(lp.get(), 1);
    glp_set_col_kind(lp.get(), col, kind);
    if (kind != GLP_BV) glp_set_col_bnds(lp.get(), col, lo == hi ? GLP_FX : GLP_DB, lo, hi);
    glp_set_obj_coef(lp.get(), col, cost);
    return col;
  };
  std::vector<int> idx(1);
  std::vector<double> val(1);
  auto add_row = [&](int type, double lo, double hi) {
    const int row = glp_add_rows(lp.get(), 1);
    glp_set_row_bnds(lp.get(), row, type, lo, hi);
    glp_set_mat_row(lp.get(), row, static_cast<int>(idx.size()) - 1, idx.data(), val.data());
    idx.resize(1);
    val.resize(1);
  };
  auto term = [&](int col, double coef) {
    idx.push_back(col);
    val.push_back(coef);
  };
  // Per job: u[g] (started in group g), y[i] (GPUs on node i), z[i] (node i used, with beta).
  std::vector<std::vector<int>> u(n, std::vector<int>(groups, 0));
  std::vector<std::vector<int>> y(n, std::vector<int>(nodes, 0));
  std::vector<std::vector<int>> node_rows(nodes);  // (column) terms of each node's capacity row
  for (int j = 0; j < n; ++j) {
    const AllocJob& job = instance.jobs[j];
    for (int g = 0; g < groups; ++g) {
      if (job.MayUse(g)) u[j][g] = add_col(GLP_BV, 0, 1, job.ValueIn(g));
    }
    for (int i = 0; i < nodes; ++i) {
      const int g = instance.nodes[i].group;
      const int cap = std::min(instance.nodes[i].free, job.gpus);
      if (u[j][g] == 0 || cap <= 0) continue;
      y[j][i] = add_col(GLP_IV, 0, cap, 0);
      node_rows[i].push_back(y[j][i]);
    }
    // One group at most; all its GPUs in the group it starts in.
    bool any = false;
    for (int g = 0; g < groups; ++g) {
      if (u[j][g] != 0) {
        term(u[j][g], 1);
        any = true;
      }
    }
    if (any) add_row(GLP_UP, 0, 1);
    for (int g = 0; g < groups; ++g) {
      if (u[j][g] == 0) continue;
      for (int i = 0; i < nodes; ++i) {
        if (instance.nodes[i].group == g && y[j][i] != 0) term(y[j][i], 1);
      }
      term(u[j][g], -job.gpus);
      add_row(GLP_FX, 0, 0);
    }
    if (job.limits.max_nodes > 0) {
      std::vector<int> z;
      for (int i = 0; i < nodes; ++i) {
        if (y[j][i] == 0) continue;
        const int zi = add_col(GLP_BV, 0, 1, 0);
        z.push_back(zi);
        term(y[j][i], 1);
        term(zi, -std::min(instance.nodes[i].free, job.gpus));
        add_row(GLP_UP, 0, 0);
      }
      if (!z.empty()) {
        for (int zi : z) term(zi, 1);
        add_row(GLP_UP, 0, job.limits.max_nodes);
      }
    }
    if (!job.limits.data_nodes.empty() && job.limits.alpha > 0) {
      const int need = LocalityNeed(job.limits.alpha, job.gpus);
      for (int d : job.limits.data_nodes) {
        if (y[j][d] != 0) term(y[j][d], 1);
      }
      for (int g = 0; g < groups; ++g) {
        if (u[j][g] != 0) term(u[j][g], -need);
      }
      add_row(GLP_LO, 0, 0);
    }
  }
  for (int i = 0; i < nodes; ++i) {
    if (node_rows[i].empty()) continue;
    for (int col : node_rows[i]) term(col, 1);
    add_row(GLP_UP, 0, instance.nodes[i].free);
  }
  if (glp_get_num_cols(lp.get()) == 0) return out;
  glp_iocp parm;
  glp_init_iocp(&parm);
  parm.msg_lev = GLP_MSG_OFF;
  parm.presolve = GLP_ON;
  parm.tm_lim = static_cast<int>(std::min(2e9, std::max(1.0, time_limit_seconds * 1000)));
  const int status = glp_intopt(lp.get(), &parm);
  if (status == GLP_ENOPFS || status == GLP_ENODFS) return out;  // nothing fits: start none
  if (status != 0 || glp_mip_status(lp.get()) != GLP_OPT) return std::nullopt;
  for (int j = 0; j < n; ++j) {
    for (int i = 0; i < nodes; ++i) {
      if (y[j][i] == 0) continue;
      const int gpus = static_cast<int>(std::lround(glp_mip_col_val(lp.get(), y[j][i])));
      if (gpus > 0) out.placement[j].emplace_back(i, gpus);
    }
  }
  out.value = SolutionValue(instance, out);
  return out;
}

std::optional<Allocator> ParseAllocator(const std::string& name) {
  if (name == "greedy" || name == "ffd") return Allocator::kGreedy;
  if (name == "exact") return Allocator::kExact;
  if (name == "ga") return Allocator::kGenetic;
  if (name == "dp") return Allocator::kDp;
  if (name == "auto") return Allocator::kAuto;
  return std::nullopt;
}

const char* AllocatorName(Allocator allocator) {
  switch (allocator) {
    case Allocator::kGreedy:
      return "greedy";
    case Allocator::kExact:
      return "exact";
    case Allocator::kGenetic:
      return "ga";
    case Allocator::kDp:
      return "dp";
    case Allocator::kAuto:
      return "auto";
  }
  return "?";
}

BatchSolution Allocate(const BatchInstance& instance, const AllocatorOptions& options,
                       bool* fell_back) {
  if (fell_back != nullptr) *fell_back = false;
  Allocator kind = options.kind;
  if (kind == Allocator::kAuto) {
    const size_t cells = instance.jobs.size() * instance.nodes.size();
    kind = IsOneDimensional(instance)
               ? Allocator::kDp
               : (cells <= static_cast<size_t>(options.auto_exact_cells) ? Allocator::kExact
                                                                         : Allocator::kGreedy);
  }
  switch (kind) {
    case Allocator::kDp:
      if (auto dp = DpAllocate(instance)) return std::move(*dp);
      break;
    case Allocator::kExact:
      if (auto exact = ExactAllocate(instance, options.time_limit_seconds)) {
        return std::move(*exact);
      }
      break;
    case Allocator::kGenetic:
      return GeneticAllocate(instance, options.genetic);
    default:
      return GreedyAllocate(instance);
  }
  if (fell_back != nullptr) *fell_back = true;
  return GreedyAllocate(instance);
}

}  // namespace clustersim
