#include "sim/alloc/bin_packing.h"

#include <glpk.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>
#include <random>
#include <string>

#include "sim/alloc/genetic.h"
#include "sim/alloc/glpk_lock.h"
#include "sim/util/error.h"

namespace clustersim {
namespace {

struct ProblemDeleter {
  void operator()(glp_prob* p) const { glp_delete_prob(p); }
};

// Items by size, largest first; ties by index.
std::vector<int> DecreasingOrder(const BinPacking& instance) {
  std::vector<int> order(instance.sizes.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return instance.sizes[a] > instance.sizes[b]; });
  return order;
}

// Sum over bins of (fill / capacity)^2: Falkenauer's tie-break, larger = fuller bins.
double FillScore(const BinPacking& instance, const Packing& packing) {
  std::vector<int64_t> fill(packing.bins, 0);
  for (size_t i = 0; i < instance.sizes.size(); ++i) fill[packing.bin_of[i]] += instance.sizes[i];
  double score = 0;
  for (int64_t f : fill) {
    const double x = static_cast<double>(f) / static_cast<double>(instance.capacity);
    score += x * x;
  }
  return score;
}

}  // namespace

void CheckBinPacking(const BinPacking& instance) {
  if (instance.capacity < 1) throw InputError("bin packing: capacity must be >= 1");
  for (size_t i = 0; i < instance.sizes.size(); ++i) {
    const int64_t s = instance.sizes[i];
    if (s < 1 || s > instance.capacity) {
      throw InputError("bin packing: item " + std::to_string(i) + " has size " +
                       std::to_string(s) + "; expected 1 to the capacity " +
                       std::to_string(instance.capacity));
    }
  }
}

Packing FirstFitInOrder(const BinPacking& instance, const std::vector<int>& order) {
  Packing out;
  out.bin_of.assign(instance.sizes.size(), -1);
  std::vector<int64_t> room;  // per bin
  for (int item : order) {
    const int64_t size = instance.sizes[item];
    size_t b = 0;
    while (b < room.size() && room[b] < size) ++b;
    if (b == room.size()) room.push_back(instance.capacity);
    room[b] -= size;
    out.bin_of[item] = static_cast<int>(b);
  }
  out.bins = static_cast<int>(room.size());
  out.optimal = out.bins == BinsLowerBound(instance);
  return out;
}

Packing FirstFit(const BinPacking& instance) {
  std::vector<int> order(instance.sizes.size());
  std::iota(order.begin(), order.end(), 0);
  return FirstFitInOrder(instance, order);
}

Packing FirstFitDecreasing(const BinPacking& instance) {
  return FirstFitInOrder(instance, DecreasingOrder(instance));
}

int BinsLowerBound(const BinPacking& instance) {
  int64_t total = 0;
  int large = 0;
  for (int64_t s : instance.sizes) {
    total += s;
    large += 2 * s > instance.capacity;
  }
  const int64_t by_volume = (total + instance.capacity - 1) / instance.capacity;
  return static_cast<int>(std::max<int64_t>(by_volume, large));
}

double FfdBound(int opt) { return 11.0 / 9.0 * opt + 6.0 / 9.0; }

std::optional<Packing> ExactBinPackingIlp(const BinPacking& instance, double time_limit_seconds) {
  const int n = static_cast<int>(instance.sizes.size());
  const Packing ffd = FirstFitDecreasing(instance);
  if (n == 0 || ffd.optimal) {
    Packing out = ffd;
    out.optimal = true;
    return out;
  }
  // Items sorted decreasing; item k (in that order) may go to bins 0..min(k, m - 1), m = FFD's bins
  // (an upper bound of the optimum): any packing can be renumbered so (symmetry breaking).
  const std::vector<int> order = DecreasingOrder(instance);
  const int m = ffd.bins;
  std::lock_guard<std::mutex> lock(GlpkMutex());
  glp_term_out(GLP_OFF);
  std::unique_ptr<glp_prob, ProblemDeleter> lp(glp_create_prob());
  glp_set_obj_dir(lp.get(), GLP_MIN);
  // Columns: y_b (b = 0..m-1) then x_kb.
  glp_add_cols(lp.get(), m);
  for (int b = 0; b < m; ++b) {
    glp_set_col_kind(lp.get(), b + 1, GLP_BV);
    glp_set_obj_coef(lp.get(), b + 1, 1.0);
  }
  std::vector<std::vector<int>> x(n);  // column of x_kb
  for (int k = 0; k < n; ++k) {
    for (int b = 0; b <= std::min(k, m - 1); ++b) {
      const int col = glp_add_cols(lp.get(), 1);
      glp_set_col_kind(lp.get(), col, GLP_BV);
      x[k].push_back(col);
    }
  }
  std::vector<int> idx(1);
  std::vector<double> val(1);
  auto add_row = [&](int type, double lo, double hi) {
    const int row = glp_add_rows(lp.get(), 1);
    glp_set_row_bnds(lp.get(), row, type, lo, hi);
    glp_set_mat_row(lp.get(), row, static_cast<int>(idx.size()) - 1, idx.data(), val.data());
    idx.resize(1);
    val.resize(1);
  };
  for (int k = 0; k < n; ++k) {  // each item in one bin
    for (int col : x[k]) {
      idx.push_back(col);
      val.push_back(1.0);
    }
    add_row(GLP_FX, 1.0, 1.0);
  }
  for (int b = 0; b < m; ++b) {  // capacity of an open bin
    for (int k = b; k < n; ++k) {
      idx.push_back(x[k][b]);
      val.push_back(static_cast<double>(instance.sizes[order[k]]));
    }
    idx.push_back(b + 1);
    val.push_back(-static_cast<double>(instance.capacity));
    add_row(GLP_UP, 0.0, 0.0);
  }
  for (int b = 0; b + 1 < m; ++b) {  // y_b >= y_(b+1)
    idx.push_back(b + 1);
    val.push_back(1.0);
    idx.push_back(b + 2);
    val.push_back(-1.0);
    add_row(GLP_LO, 0.0, 0.0);
  }
  for (int b = 0; b < m; ++b) {  // at least the lower bound of bins
    idx.push_back(b + 1);
    val.push_back(1.0);
  }
  add_row(GLP_LO, BinsLowerBound(instance), 0.0);
  glp_iocp parm;
  glp_init_iocp(&parm);
  parm.msg_lev = GLP_MSG_OFF;
  parm.presolve = GLP_ON;
  parm.tm_lim = static_cast<int>(std::min(2e9, std::max(1.0, time_limit_seconds * 1000)));
  const int status = glp_intopt(lp.get(), &parm);
  if (status != 0 || glp_mip_status(lp.get()) != GLP_OPT) return std::nullopt;
  Packing out;
  out.bin_of.assign(n, -1);
  std::vector<int> renumber(m, -1);
  int bins = 0;
  for (int k = 0; k < n; ++k) {
    for (size_t b = 0; b < x[k].size(); ++b) {
      if (glp_mip_col_val(lp.get(), x[k][b]) > 0.5) {
        if (renumber[b] < 0) renumber[b] = bins++;
        out.bin_of[order[k]] = renumber[b];
      }
    }
  }
  out.bins = bins;
  out.optimal = true;
  return out;
}

std::optional<Packing> ExactBinPackingDp(const BinPacking& instance) {
  const int n = static_cast<int>(instance.sizes.size());
  if (n > kMaxDpItems || instance.capacity > (int64_t{1} << 30)) return std::nullopt;
  Packing out;
  out.bin_of.assign(n, -1);
  out.optimal = true;
  if (n == 0) return out;
  // best[mask] = (bins opened, fill of the last bin), least first; a new bin is opened only when
  // the item does not fit the last one, so the pair's order is the right one to minimize.
  const uint32_t full = (uint32_t{1} << n) - 1;
  std::vector<std::pair<int32_t, int32_t>> best(full + 1, {n + 1, 0});
  std::vector<int8_t> last(full + 1, -1);  // the item added last on the best path
  best[0] = {1, 0};
  for (uint32_t mask = 0; mask < full; ++mask) {
    const auto [bins, fill] = best[mask];
    if (bins > n) continue;
    for (int i = 0; i < n; ++i) {
      if (mask >> i & 1) continue;
      const int32_t s = static_cast<int32_t>(instance.sizes[i]);
      const std::pair<int32_t, int32_t> next =
          fill + s <= instance.capacity ? std::pair{bins, fill + s} : std::pair{bins + 1, s};
      const uint32_t to = mask | (uint32_t{1} << i);
      if (next < best[to]) {
        best[to] = next;
        last[to] = static_cast<int8_t>(i);
      }
    }
  }
  // Walk back: the items in the order they were added, then first fit in that order reproduces
  // the path's bins (each item went to the last bin or a new one).
  std::vector<int> order;
  for (uint32_t mask = full; mask != 0; mask &= ~(uint32_t{1} << last[mask])) {
    order.push_back(last[mask]);
  }
  std::reverse(order.begin(), order.end());
  int bin = 0;
  int64_t fill = 0;
  for (size_t k = 0; k < order.size(); ++k) {
    const int64_t s = instance.sizes[order[k]];
    if (k > 0 && fill + s > instance.capacity) {
      ++bin;
      fill = 0;
    }
    fill += s;
    out.bin_of[order[k]] = bin;
  }
  out.bins = bin + 1;
  CHECK(out.bins == best[full].first, "bin packing DP: the walk back disagrees with the table");
  return out;
}

Packing GeneticBinPacking(const BinPacking& instance, const GeneticOptions& options) {
  const int n = static_cast<int>(instance.sizes.size());
  if (n == 0) return FirstFit(instance);
  // Fitness to maximize: fewer bins first, then fuller bins (the fill score is < bins + 1).
  auto fitness = [&](const std::vector<int>& order, Packing* packing) {
    *packing = FirstFitInOrder(instance, order);
    return -packing->bins * static_cast<double>(n + 1) + FillScore(instance, *packing);
  };
  Packing best;
  EvolveOrders(n, DecreasingOrder(instance), options, fitness, &best);
  return best;
}

}  // namespace clustersim
