#include "policies/gavel_lp.h"

#include <glpk.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <mutex>

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

  // Columns: X[m][j] where T[m][j] > 0 (1-based for GLPK), then t (max-min only).
  std::vector<std::vector<int>> column(jobs, std::vector<int>(types, 0));
  std::vector<double> equal(jobs, 0);
  std::vector<bool> in_minimum(jobs, false);
  int columns = 0;
  for (int m = 0; m < jobs; ++m) {
    CHECK(static_cast<int>(problem.throughput[m].size()) == types && problem.scale[m] >= 1,
          "Gavel LP: a throughput per type and a scale factor >= 1 per job");
    for (int j = 0; j < types; ++j) {
      CHECK(problem.throughput[m][j] >= 0, "Gavel LP: negative throughput");
      if (problem.throughput[m][j] > 0 && problem.gpus_per_type[j] >= problem.scale[m]) {
        column[m][j] = ++columns;
      }
    }
    equal[m] = EqualShareThroughput(problem, m);
    in_minimum[m] = equal[m] > 0 &&
                    std::any_of(column[m].begin(), column[m].end(), [](int c) { return c > 0; });
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
  for (int c = 1; c <= columns; ++c) glp_set_col_bnds(lp.get(), c, GLP_LO, 0.0, 0.0);
  // Rows: one "runs on one type at a time" per job, one capacity per type, and (max-min) one
  // "at least t" per job in the minimum.
  std::vector<int> ia{0};
  std::vector<int> ja{0};
  std::vector<double> ar{0.0};
  auto entry = [&](int row, int col, double value) {
    ia.push_back(row);
    ja.push_back(col);
    ar.push_back(value);
  };
  int rows = 0;
  for (int m = 0; m < jobs; ++m) {
    if (std::none_of(column[m].begin(), column[m].end(), [](int c) { return c > 0; })) continue;
    glp_add_rows(lp.get(), 1);
    ++rows;
    glp_set_row_bnds(lp.get(), rows, GLP_UP, 0.0, 1.0);
    for (int j = 0; j < types; ++j) {
      if (column[m][j] > 0) entry(rows, column[m][j], 1.0);
    }
  }
  for (int j = 0; j < types; ++j) {
    glp_add_rows(lp.get(), 1);
    ++rows;
    glp_set_row_bnds(lp.get(), rows, GLP_UP, 0.0, problem.gpus_per_type[j]);
    for (int m = 0; m < jobs; ++m) {
      if (column[m][j] > 0) entry(rows, column[m][j], problem.scale[m]);
    }
  }
  // Coefficient of X[m][j] in job m's normalized throughput.
  auto fair = [&](int m, int j) {
    const double w = problem.weight.empty() ? 1.0 : problem.weight[m];
    return problem.throughput[m][j] * problem.scale[m] / (w * equal[m]);
  };
  if (max_min) {
    for (int m = 0; m < jobs; ++m) {
      if (!in_minimum[m]) continue;
      glp_add_rows(lp.get(), 1);
      ++rows;
      glp_set_row_bnds(lp.get(), rows, GLP_LO, 0.0, 0.0);
      for (int j = 0; j < types; ++j) {
        if (column[m][j] > 0) entry(rows, column[m][j], fair(m, j));
      }
      entry(rows, t_column, -1.0);
    }
    glp_set_obj_coef(lp.get(), t_column, 1.0);
  } else {
    for (int m = 0; m < jobs; ++m) {
      for (int j = 0; j < types; ++j) {
        if (column[m][j] > 0) {
          glp_set_obj_coef(lp.get(), column[m][j], problem.scale[m] * problem.throughput[m][j]);
        }
      }
    }
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
    for (int m = 0; m < jobs; ++m) {
      for (int j = 0; j < types; ++j) {
        if (column[m][j] > 0) {
          glp_set_obj_coef(lp.get(), column[m][j], problem.scale[m] * problem.throughput[m][j]);
        }
      }
    }
    if (!Solve(lp.get(), /*presolve=*/false)) return out;
  }
  for (int m = 0; m < jobs; ++m) {
    for (int j = 0; j < types; ++j) {
      if (column[m][j] > 0) {
        // Rounded to 1e-9 so that shares equal in exact arithmetic tie exactly: the priority
        // rule's ties then fall to its tie-breaks, not to the simplex's last bits.
        const double x = std::round(glp_get_col_prim(lp.get(), column[m][j]) * kGrid) / kGrid;
        out.x[m][j] = std::clamp(x, 0.0, 1.0);
      }
    }
  }
  out.optimal = true;
  return out;
}

}  // namespace clustersim
