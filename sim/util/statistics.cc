#include "sim/util/statistics.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <utility>

#include "sim/util/error.h"

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

TwoPassPercentiles::TwoPassPercentiles(std::vector<double> qs, size_t direct_limit)
    : qs_(std::move(qs)), direct_limit_(direct_limit) {}

int64_t TwoPassPercentiles::LowRank(double q) const {
  return static_cast<int64_t>(std::floor(q * static_cast<double>(size_ - 1)));
}

uint32_t TwoPassPercentiles::BucketOf(double x) {
  // -0 counts as +0 (they compare equal); negative values' keys are their bits inverted, so
  // that keys order as the values do.
  const uint64_t bits = std::bit_cast<uint64_t>(x + 0.0);
  const uint64_t key = (bits >> 63) != 0 ? ~bits : bits | (uint64_t{1} << 63);
  return static_cast<uint32_t>(key >> (64 - kBucketBits));
}

void TwoPassPercentiles::AddToBucket(double x) {
  const uint32_t b = BucketOf(x);
  if (counts_[b]++ == 0) {
    first_[b] = x;
  } else if (!(first_[b] == x)) {
    mixed_[b] = 1;
  }
}

void TwoPassPercentiles::StartCounting() {
  bucketed_ = true;
  counts_.assign(size_t{1} << kBucketBits, 0);
  first_.assign(size_t{1} << kBucketBits, 0.0);
  mixed_.assign(size_t{1} << kBucketBits, 0);
  for (double x : direct_) AddToBucket(x);
  std::vector<double>().swap(direct_);
}

void TwoPassPercentiles::Count(double x) {
  ++size_;
  sum_ += x;
  if (bucketed_) {
    AddToBucket(x);
    return;
  }
  direct_.push_back(x);
  if (direct_.size() > direct_limit_) StartCounting();
}

bool TwoPassPercentiles::NeedsCollect() {
  if (!bucketed_ || size_ == 0) return false;
  needed_.clear();
  for (const double q : qs_) {
    const int64_t lo = LowRank(q);
    needed_.push_back({lo});
    if (lo + 1 < size_) needed_.push_back({lo + 1});
  }
  // In rank order (lo + 1 of one q may pass lo of the next), one walk over the buckets'
  // cumulative counts finds them all.
  std::vector<size_t> order(needed_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return needed_[a].rank < needed_[b].rank; });
  slot_.assign(size_t{1} << kBucketBits, -1);
  collected_.clear();
  int64_t before = 0;  // values in the buckets below b
  size_t next = 0;
  for (uint32_t b = 0; b < counts_.size() && next < order.size(); ++b) {
    while (next < order.size() && needed_[order[next]].rank < before + counts_[b]) {
      Needed& n = needed_[order[next++]];
      n.bucket = b;
      n.offset = n.rank - before;
      if (mixed_[b] == 0) {
        n.known = true;
        n.value = first_[b];
      } else if (slot_[b] < 0) {
        slot_[b] = static_cast<int16_t>(collected_.size());
        collected_.emplace_back();
        collected_.back().reserve(static_cast<size_t>(counts_[b]));
      }
    }
    before += counts_[b];
  }
  return !collected_.empty();
}

void TwoPassPercentiles::Collect(double x) {
  const int16_t s = slot_[BucketOf(x)];
  if (s >= 0) collected_[static_cast<size_t>(s)].push_back(x);
}

std::vector<double> TwoPassPercentiles::Get() {
  CHECK(size_ > 0, "percentiles of no values");
  if (!bucketed_) return Percentiles(direct_, qs_);
  CHECK(!needed_.empty(), "TwoPassPercentiles::Get before NeedsCollect");
  for (Needed& n : needed_) {
    if (n.known) continue;
    std::vector<double>& values = collected_[static_cast<size_t>(slot_[n.bucket])];
    CHECK(static_cast<int64_t>(values.size()) == counts_[n.bucket],
          "the second pass gave other values than the first");
    const auto at = values.begin() + static_cast<std::ptrdiff_t>(n.offset);
    std::nth_element(values.begin(), at, values.end());
    n.value = *at;
  }
  std::vector<double> out;
  size_t i = 0;
  for (const double q : qs_) {
    const int64_t lo = LowRank(q);
    const double low = needed_[i++].value;
    if (lo + 1 >= size_) {
      out.push_back(low);
      continue;
    }
    const double high = needed_[i++].value;
    out.push_back(low + (q * static_cast<double>(size_ - 1) - static_cast<double>(lo)) *
                            (high - low));
  }
  return out;
}

}  // namespace clustersim
