#include "sim/util/statistics.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace clustersim {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Walks the union of the sorted samples' values in increasing order, calling
// step(x, next_x, F_a(x), F_b(x)) at each distinct value x (next_x = +inf after the last).
template <typename Step>
void WalkCdfs(const std::vector<double>& a, const std::vector<double>& b, Step step) {
  size_t i = 0;
  size_t j = 0;
  const double na = static_cast<double>(a.size());
  const double nb = static_cast<double>(b.size());
  while (i < a.size() || j < b.size()) {
    const double x = j >= b.size() || (i < a.size() && a[i] <= b[j]) ? a[i] : b[j];
    while (i < a.size() && a[i] == x) ++i;
    while (j < b.size() && b[j] == x) ++j;
    double next = std::numeric_limits<double>::infinity();
    if (i < a.size()) next = a[i];
    if (j < b.size()) next = std::min(next, b[j]);
    step(x, next, i / na, j / nb);
  }
}

}  // namespace

double KolmogorovSmirnov(std::vector<double> a, std::vector<double> b) {
  if (a.empty() || b.empty()) return kNaN;
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  double d = 0;
  WalkCdfs(a, b, [&](double, double, double fa, double fb) { d = std::max(d, std::abs(fa - fb)); });
  return d;
}

double Wasserstein1(std::vector<double> a, std::vector<double> b) {
  if (a.empty() || b.empty()) return kNaN;
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  double w = 0;
  WalkCdfs(a, b, [&](double x, double next, double fa, double fb) {
    if (std::isfinite(next)) w += std::abs(fa - fb) * (next - x);  // both CDFs are 1 after
  });
  return w;
}

double PearsonCorrelation(const std::vector<double>& x, const std::vector<double>& y) {
  const size_t n = std::min(x.size(), y.size());
  if (n < 2) return kNaN;
  double mx = 0, my = 0;
  for (size_t i = 0; i < n; ++i) {
    mx += x[i];
    my += y[i];
  }
  mx /= n;
  my /= n;
  double sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < n; ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  if (!(sxx > 0) || !(syy > 0)) return kNaN;
  return sxy / std::sqrt(sxx * syy);
}

double MeanAbsoluteError(const std::vector<double>& x, const std::vector<double>& y) {
  const size_t n = std::min(x.size(), y.size());
  if (n == 0) return kNaN;
  double total = 0;
  for (size_t i = 0; i < n; ++i) total += std::abs(x[i] - y[i]);
  return total / n;
}

double Mean(const std::vector<double>& values) {
  if (values.empty()) return kNaN;
  double total = 0;
  for (double v : values) total += v;
  return total / values.size();
}

double Percentile(std::vector<double>& values, double q) { return Percentiles(values, {q})[0]; }

std::vector<double> Percentiles(std::vector<double>& values, const std::vector<double>& qs) {
  std::vector<double> out;
  // Invariant: every value before `from` is <= every value from `from` on, so the value of
  // rank r >= from is the (r - from)-th smallest of values[from..].
  size_t from = 0;
  for (const double q : qs) {
    const double rank = q * (values.size() - 1);
    const size_t lo = static_cast<size_t>(std::floor(rank));
    std::nth_element(values.begin() + static_cast<std::ptrdiff_t>(from),
                     values.begin() + static_cast<std::ptrdiff_t>(lo), values.end());
    from = lo;
    const double low = values[lo];
    if (lo + 1 >= values.size()) {
      out.push_back(low);
      continue;
    }
    const double high =
        *std::min_element(values.begin() + static_cast<std::ptrdiff_t>(lo) + 1, values.end());
    out.push_back(low + (rank - lo) * (high - low));
  }
  return out;
}

double Median(std::vector<double> values) { return Percentile(values, 0.5); }

}  // namespace clustersim
