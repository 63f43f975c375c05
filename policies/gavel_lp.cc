#include "policies/gavel_lp.h"

#include <glpk.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

#include "sim/alloc/glpk_lock.h"
#include "sim/util/error.h"

namespace clustersim {
namespace {

struct ProblemDeleter {
  void operator()(glp_prob* p) const { glp_delete_prob(p); }
};

// Relative slack kept below the optimal minimum in the second max-min LP, so that rounding in the
// first solve cannot make the second infeasible.
constexpr double kFloorSlack = 1e-7;
constexpr double kGrid = 1e9;  // allocations are reported on a grid of 1e-9

bool Solve(glp_prob* lp, bool presolve) {
  glp_smcp parm;
  glp_init_smcp(&parm);
  parm.msg_lev = GLP_MSG_OFF;
  parm.presolve = presolve ? GLP_ON : GLP_OFF;
  if (glp_simplex(lp, &parm) != 0) return false;
  return glp_get_status(lp) == GLP_OPT;
}

// Gives the jobs of one class (`members`, ascending) their allocations from the class's `x`. Where
// x mixes types on which the class's throughput is the same, every job would run part of its time
// on each, and the priority rule would move it between them round after round for nothing: the
// class's time on those types is instead dealt out whole, in job order and listed type order, so
// that all but a few jobs run on one type. Each job keeps its total share of the types, hence its
// throughput; each type keeps the class's total; so the allocation stays optimal.
void SplitOverEqualTypes(const GavelProblem& problem, const std::vector<double>& x,
                         const std::vector<int>& members, std::vector<std::vector<double>>* out) {
  const int types = static_cast<int>(x.size());
  const std::vector<double>& rate = problem.throughput[members[0]];
  std::vector<bool> done(types, false);
  for (int m : members) (*out)[m] = x;
  if (members.size() < 2) return;
  for (int j = 0; j < types; ++j) {
    if (done[j] || !(x[j] > 0)) continue;
    std::vector<int> same;  // the types of x with the rate of j
    for (int k = j; k < types; ++k) {
      if (!done[k] && x[k] > 0 && rate[k] == rate[j]) {
        same.push_back(k);
        done[k] = true;
      }
    }
    if (same.size() < 2) continue;
    double share = 0;          // each job's time on these types together
    std::vector<double> left;  // the class's job-time left per type, on the 1e-9 grid
    for (int k : same) {
      share += x[k];
      left.push_back(std::round(x[k] * static_cast<double>(members.size()) * kGrid) / kGrid);
    }
    // The grid's rounding leaves a type's total off by up to 1e-9 per job, and a job's need by
    // a few 1e-9: such crumbs are not dealt out.
    const double crumb = static_cast<double>(members.size()) / kGrid;
    size_t at = 0;
    for (int m : members) {
      double need = share;
      for (int k : same) (*out)[m][k] = 0;
      while (need > 2 / kGrid && at < same.size()) {
        const double take = std::min(need, left[at]);
        (*out)[m][same[at]] = std::round(((*out)[m][same[at]] + take) * kGrid) / kGrid;
        need = std::round((need - take) * kGrid) / kGrid;
        left[at] = std::round((left[at] - take) * kGrid) / kGrid;
        if (left[at] <= crumb) ++at;
      }
    }
  }
}

}  // namespace

double EqualShareThroughput(const GavelProblem& problem, int job) {
  const int jobs = static_cast<int>(problem.scale.size());
  double total = 0;
  for (int n : problem.gpus_per_type) total += n;
  const double denominator = std::max<double>(jobs, total);
  double sum = 0;
  for (size_t j = 0; j < problem.gpus_per_type.size(); ++j) {
    sum += problem.throughput[job][j] * problem.gpus_per_type[j];
  }
  return denominator > 0 ? sum / denominator : 0;
}

GavelAllocation SolveGavel(const GavelProblem& problem, GavelObjective objective) {
  const int jobs = static_cast<int>(problem.scale.size());
  const int types = static_cast<int>(problem.gpus_per_type.size());
  CHECK(static_cast<int>(problem.throughput.size()) == jobs &&
            (problem.weight.empty() || static_cast<int>(problem.weight.size()) == jobs),
        "Gavel LP: one throughput row and weight per job");
  GavelAllocation out;
  out.x.assign(jobs, std::vector<double>(types, 0.0));
  if (jobs == 0 || types == 0) {
    out.optimal = true;
    return out;
  }

  // Classes of identical jobs (the same throughputs, scale factor and weight), in order of their
  // first job. Averaging an optimal X over the permutations of a class's jobs keeps every
  // constraint and both objectives, so each LP has an optimum giving a class's jobs one
  // allocation; the LPs below solve for that allocation, one set of columns per class, and a
  // class of n jobs counts n times against capacity and in the total work rate.
  std::vector<int> class_of(jobs);
  std::vector<int> first;  // per class: its first job
  std::vector<int> count;  // per class: its jobs
  {
    using Key = std::tuple<int, double, std::vector<double>>;
    std::map<Key, int> index;
    for (int m = 0; m < jobs; ++m) {
      CHECK(static_cast<int>(problem.throughput[m].size()) == types && problem.scale[m] >= 1,
            "Gavel LP: a throughput per type and a scale factor >= 1 per job");
      for (int j = 0; j < types; ++j) {
        CHECK(problem.throughput[m][j] >= 0, "Gavel LP: negative throughput");
      }
      const double w = problem.weight.empty() ? 1.0 : problem.weight[m];
      const auto [it, added] = index.try_emplace(Key{problem.scale[m], w, problem.throughput[m]},
                                                 static_cast<int>(first.size()));
      if (added) {
        first.push_back(m);
        count.push_back(0);
      }
      class_of[m] = it->second;
      ++count[it->second];
    }
  }
  const int classes = static_cast<int>(first.size());

  // Columns: X[c][j] where T[c][j] > 0 (1-based for GLPK), then t (max-min only).
  std::vector<std::vector<int>> column(classes, std::vector<int>(types, 0));
  std::vector<double> equal(classes, 0);
  std::vector<bool> in_minimum(classes, false);
  int columns = 0;
  for (int c = 0; c < classes; ++c) {
    const int m = first[c];
    for (int j = 0; j < types; ++j) {
      if (problem.throughput[m][j] > 0 && problem.gpus_per_type[j] >= problem.scale[m]) {
        column[c][j] = ++columns;
      }
    }
    equal[c] = EqualShareThroughput(problem, m);
    in_minimum[c] = equal[c] > 0 &&
                    std::any_of(column[c].begin(), column[c].end(), [](int k) { return k > 0; });
  }
  const bool max_min = objective == GavelObjective::kMaxMinFairness;
  const int t_column = max_min ? ++columns : 0;
  if (columns == 0) {
    out.optimal = true;
    return out;
  }

  std::lock_guard<std::mutex> lock(GlpkMutex());
  glp_term_out(GLP_OFF);  // GLPK prints its scaling and simplex steps otherwise
  std::unique_ptr<glp_prob, ProblemDeleter> lp(glp_create_prob());
  glp_set_obj_dir(lp.get(), GLP_MAX);
  glp_add_cols(lp.get(), columns);
  for (int k = 1; k <= columns; ++k) glp_set_col_bnds(lp.get(), k, GLP_LO, 0.0, 0.0);
  // Rows: one "runs on one type at a time" per class, one capacity per type, and (max-min) one
  // "at least t" per class in the minimum.
  std::vector<int> ia{0};
  std::vector<int> ja{0};
  std::vector<double> ar{0.0};
  auto entry = [&](int row, int col, double value) {
    ia.push_back(row);
    ja.push_back(col);
    ar.push_back(value);
  };
  int rows = 0;
  for (int c = 0; c < classes; ++c) {
    if (std::none_of(column[c].begin(), column[c].end(), [](int k) { return k > 0; })) continue;
    glp_add_rows(lp.get(), 1);
    ++rows;
    glp_set_row_bnds(lp.get(), rows, GLP_UP, 0.0, 1.0);
    for (int j = 0; j < types; ++j) {
      if (column[c][j] > 0) entry(rows, column[c][j], 1.0);
    }
  }
  for (int j = 0; j < types; ++j) {
    glp_add_rows(lp.get(), 1);
    ++rows;
    glp_set_row_bnds(lp.get(), rows, GLP_UP, 0.0, problem.gpus_per_type[j]);
    for (int c = 0; c < classes; ++c) {
      if (column[c][j] > 0) {
        entry(rows, column[c][j], static_cast<double>(count[c]) * problem.scale[first[c]]);
      }
    }
  }
  // Coefficient of X[c][j] in a job of class c's normalized throughput.
  auto fair = [&](int c, int j) {
    const int m = first[c];
    const double w = problem.weight.empty() ? 1.0 : problem.weight[m];
    return problem.throughput[m][j] * problem.scale[m] / (w * equal[c]);
  };
  // The objective "total work rate": X[c][j] weighs the class's jobs together.
  auto maximize_work = [&] {
    for (int c = 0; c < classes; ++c) {
      const int m = first[c];
      for (int j = 0; j < types; ++j) {
        if (column[c][j] > 0) {
          glp_set_obj_coef(lp.get(), column[c][j],
                           static_cast<double>(count[c]) * problem.scale[m] * problem.throughput[m][j]);
        }
      }
    }
  };
  if (max_min) {
    for (int c = 0; c < classes; ++c) {
      if (!in_minimum[c]) continue;
      glp_add_rows(lp.get(), 1);
      ++rows;
      glp_set_row_bnds(lp.get(), rows, GLP_LO, 0.0, 0.0);
      for (int j = 0; j < types; ++j) {
        if (column[c][j] > 0) entry(rows, column[c][j], fair(c, j));
      }
      entry(rows, t_column, -1.0);
    }
    glp_set_obj_coef(lp.get(), t_column, 1.0);
  } else {
    maximize_work();
  }
  glp_load_matrix(lp.get(), static_cast<int>(ia.size()) - 1, ia.data(), ja.data(), ar.data());
  glp_scale_prob(lp.get(), GLP_SF_AUTO);
  if (!Solve(lp.get(), /*presolve=*/true)) return out;
  out.objective = glp_get_obj_val(lp.get());
  if (max_min) {
    // Second LP: every job at or above the optimal minimum, the most work done.
    const double floor = out.objective * (1 - kFloorSlack);
    glp_set_col_bnds(lp.get(), t_column, GLP_LO, floor, 0.0);
    glp_set_obj_coef(lp.get(), t_column, 0.0);
    maximize_work();
    if (!Solve(lp.get(), /*presolve=*/false)) return out;
  }
  // The class's allocation, rounded to 1e-9 so that shares equal in exact arithmetic tie
  // exactly: the priority rule's ties then fall to its tie-breaks, not to the simplex's last bits.
  std::vector<std::vector<double>> class_x(classes, std::vector<double>(types, 0.0));
  for (int c = 0; c < classes; ++c) {
    for (int j = 0; j < types; ++j) {
      if (column[c][j] > 0) {
        const double x = std::round(glp_get_col_prim(lp.get(), column[c][j]) * kGrid) / kGrid;
        class_x[c][j] = std::clamp(x, 0.0, 1.0);
      }
    }
  }
  std::vector<std::vector<int>> members(classes);
  for (int m = 0; m < jobs; ++m) members[class_of[m]].push_back(m);
  for (int c = 0; c < classes; ++c) SplitOverEqualTypes(problem, class_x[c], members[c], &out.x);
  out.optimal = true;
  return out;
}

}  // namespace clustersim
