#include "policies/user_estimates.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <numeric>
#include <set>

#include "sim/util/error.h"
#include "sim/util/random.h"

namespace clustersim {
namespace {

constexpr int64_t kMinute = 60;
constexpr int64_t kHour = 3600;
constexpr int kHeadSize = 20;             // TOP in the authors' code
constexpr double kHeadPercent = 89.0;     // binsiz_head_sum: jobs using a head value
// Head sizes of popularity ranks 2..20: a e^(b x) + c percent (binsiz_head_params).
constexpr double kHeadA = 14.0491, kHeadB = -0.177531, kHeadC = 0.462513;
// Tail sizes of popularity ranks 21...: a x^b, normalized (binsiz_tail_params).
constexpr double kTailA = 795.6, kTailB = -2.267;
// Tail times: y = (a - 1) x / (a - x) with a = 1 + p K^q (bintim_param).
constexpr double kTailP = 12.1039, kTailQ = -0.6026;

// The 15 values among the 20 most popular of all four traces (EST_JOINT).
constexpr std::array<int64_t, 15> kJointEstimates = {
    5 * kMinute, 15 * kMinute, 10 * kMinute, 20 * kMinute, 30 * kMinute,
    1 * kHour,   2 * kHour,    3 * kHour,    4 * kHour,    5 * kHour,
    6 * kHour,   8 * kHour,    10 * kHour,   12 * kHour,   18 * kHour};
// Round values filling the head, counting down from the maximum (EST_ROUND).
constexpr std::array<int64_t, 10> kRoundSteps = {200 * kHour, 100 * kHour, 50 * kHour, 10 * kHour,
                                                 5 * kHour,   2 * kHour,   1 * kHour,  20 * kMinute,
                                                 10 * kMinute, 5 * kMinute};
// (jobs, distinct values) points of the linear model of K (BINUM_LINEAR).
constexpr std::array<std::pair<int64_t, int>, 7> kValueCountPoints = {
    {{0, 0}, {20, 10}, {200, 20}, {1000, 35}, {10000, 90}, {70000, 340}, {250000, 565}}};
// Popularity rank of each head time rank (0 = the maximum, then ascending times) in the traces
// SDSC SP2, CTC SP2, KTH SP2 and LANL Blue (TIMRNK_TO_POPRNK).
constexpr int kTimeRankToPopularity[kHeadSize][4] = {
    {3, 1, 1, 1},    {1, 3, 4, 6},     {4, 4, 10, 5},    {17, 2, 14, 3},   {13, 12, 20, 7},
    {7, 9, 2, 2},    {8, 8, 3, 18},    {18, 18, 7, 19},  {2, 6, 12, 4},    {6, 7, 6, 11},
    {16, 11, 19, 20}, {10, 20, 5, 9},  {5, 16, 18, 10},  {15, 5, 16, 14},  {14, 14, 9, 13},
    {19, 13, 17, 16}, {11, 10, 15, 15}, {12, 15, 13, 17}, {9, 17, 8, 8},   {20, 19, 11, 12}};

void Shuffle(std::vector<int64_t>* values, std::mt19937_64& rng) {
  for (size_t i = values->size(); i > 1; --i) {
    std::swap((*values)[i - 1], (*values)[UniformBelow(rng, i)]);
  }
}

// Head percentages by popularity rank 1..n (gen_head_binsiz): ranks 2..n by the exponential,
// rank 1 the rest of kHeadPercent; sorted descending.
std::vector<double> HeadPercentages(size_t n) {
  std::vector<double> sizes(n, 0.0);
  double sum = 0;
  for (size_t i = 1; i < n; ++i) {
    sizes[i] = kHeadA * std::exp(kHeadB * static_cast<double>(i + 1)) + kHeadC;
    sum += sizes[i];
  }
  sizes[0] = kHeadPercent - sum;
  std::sort(sizes.begin(), sizes.end(), std::greater<double>());
  return sizes;
}

// Popularity rank (1-based) of each of the 20 head time ranks (gen_head_timrnk_poprnk_map
// without user bins): the maximum is rank 1; a rank is forced once the time ranks pass the last
// row where some trace had it; otherwise the better of two uniform draws from the ranks the rows
// so far offer (each row contributing its four traces' ranks).
std::vector<int> HeadPopularityRanks(std::mt19937_64& rng) {
  std::map<int, int> bound;  // rank -> the last time rank where a trace has it
  for (int row = kHeadSize - 1; row >= 0; --row) {
    for (int rank : kTimeRankToPopularity[row]) bound.emplace(rank, row);
  }
  std::vector<int> mapping;
  std::set<int> chosen;
  std::vector<int> pool;
  for (int row = 0; row < kHeadSize; ++row) {
    for (int rank : kTimeRankToPopularity[row]) {
      if (chosen.count(rank) == 0) pool.push_back(rank);
    }
    int rank = row == 0 ? 1 : -1;
    for (int r = 1; rank == -1 && r <= kHeadSize; ++r) {
      if (bound[r] <= row && chosen.count(r) == 0) rank = r;
    }
    if (rank == -1) {
      for (int draw = 0; draw < 2; ++draw) {  // FAVOR_SMALL
        const int candidate = pool[UniformBelow(rng, pool.size())];
        if (rank == -1 || candidate < rank) rank = candidate;
      }
    }
    mapping.push_back(rank);
    chosen.insert(rank);
    pool.erase(std::remove(pool.begin(), pool.end(), rank), pool.end());
  }
  return mapping;
}

// The tail's times (gen_tail_bintim), ascending: whole minutes of y(x) x max, shifted by 0,
// +-30, +-20 or +-10 s to avoid a time already taken, strictly between 0 and max.
std::vector<int64_t> TailTimes(int count, int values, int64_t max_seconds,
                               const std::set<int64_t>& head) {
  const double a = 1 + kTailP * std::pow(static_cast<double>(values), kTailQ);
  std::set<int64_t> taken;
  for (int i = 1; i <= count; ++i) {
    const double x = static_cast<double>(i) / count;
    const double y = (a - 1) * x / (a - x);
    const int64_t seconds =
        static_cast<int64_t>(std::round(y * static_cast<double>(max_seconds) / 60.0) * 60);
    for (int64_t offset : {0, 30, -30, 20, -20, 10, -10}) {
      const int64_t s = seconds + offset;
      if (taken.count(s) == 0 && head.count(s) == 0 && s > 0 && s < max_seconds) {
        taken.insert(s);
        break;
      }
    }
  }
  return {taken.begin(), taken.end()};
}

// Makes the counts sum to `jobs` (adjust_njobs): proportionally, then one at a time, then down
// to one, then to zero, over the values from the most jobs to the fewest (ties: the more popular
// value first, then the shorter).
void AdjustCounts(int64_t jobs, const std::vector<double>& percent, std::vector<int64_t>* counts) {
  int64_t sum = std::accumulate(counts->begin(), counts->end(), int64_t{0});
  int64_t diff = jobs > sum ? jobs - sum : sum - jobs;
  const int sign = jobs > sum ? 1 : -1;
  const double f = sum > 0 ? static_cast<double>(diff) / static_cast<double>(sum) : 0;
  for (int attempt = 0; diff != 0; ++attempt) {
    CHECK(attempt < 4, "user estimates: job counts cannot be adjusted");
    std::vector<size_t> order(counts->size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
      if ((*counts)[x] != (*counts)[y]) return (*counts)[x] > (*counts)[y];
      return percent[x] > percent[y];
    });
    for (size_t i : order) {
      int64_t& n = (*counts)[i];
      if (n == 0) continue;
      int64_t adjust = 0;
      switch (attempt) {
        case 0:
          adjust = static_cast<int64_t>(std::ceil(f * static_cast<double>(n)));
          break;
        case 1:
          adjust = 1;
          break;
        case 2:
          adjust = n - 1;
          break;
        default:
          adjust = n;
          break;
      }
      if (sign < 0) {
        adjust = std::min(adjust, n);
        if (adjust == n && attempt != 3) --adjust;
      }
      adjust = std::min(adjust, diff);
      n += sign * adjust;
      diff -= adjust;
      if (diff == 0) break;
    }
  }
}

}  // namespace

int EstimateValueCount(int64_t jobs) {
  if (jobs <= 0) return 0;
  if (jobs > kValueCountPoints.back().first) return kValueCountPoints.back().second;
  size_t k = 1;
  while (jobs > kValueCountPoints[k].first) ++k;
  const auto [x0, y0] = kValueCountPoints[k - 1];
  const auto [x1, y1] = kValueCountPoints[k];
  const double slope = static_cast<double>(y1 - y0) / static_cast<double>(x1 - x0);
  return y0 + static_cast<int>(std::round(static_cast<double>(jobs - x0) * slope));
}

std::vector<int64_t> HeadEstimates(int64_t max_seconds) {
  CHECK(max_seconds >= kHour, "user estimates: the longest estimate must be at least an hour");
  std::vector<int64_t> head = {max_seconds};
  for (int64_t value : kJointEstimates) {
    if (value < max_seconds) head.push_back(value);
  }
  for (int64_t step : kRoundSteps) {
    if (head.size() >= static_cast<size_t>(kHeadSize)) break;
    for (int64_t value = max_seconds / step * step; value > 0; value -= step) {
      if (std::find(head.begin(), head.end(), value) == head.end()) head.push_back(value);
      if (head.size() >= static_cast<size_t>(kHeadSize)) break;
    }
  }
  std::sort(head.begin() + 1, head.end());
  return head;
}

std::vector<EstimateBin> EstimateHistogram(int64_t jobs, int64_t max_seconds,
                                           std::mt19937_64& rng) {
  if (jobs <= 0) return {};
  const int values = EstimateValueCount(jobs);
  // Head: times by time rank, each with the percentage of its popularity rank. With fewer than
  // 20 head values (a maximum of about an hour) the ranks drawn for the first time ranks are
  // renumbered 1..n in their order (the authors' code assumes 20).
  const std::vector<int64_t> head = HeadEstimates(max_seconds);
  const std::vector<double> head_sizes = HeadPercentages(head.size());
  const std::vector<int> ranks = HeadPopularityRanks(rng);
  std::vector<int> order(head.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return ranks[x] < ranks[y]; });
  std::map<int64_t, double> percent_of;
  for (size_t position = 0; position < order.size(); ++position) {
    percent_of[head[order[position]]] = head_sizes[position];
  }
  // Tail: times and sizes matched at random.
  const std::set<int64_t> head_set(head.begin(), head.end());
  std::vector<int64_t> tail =
      TailTimes(values - static_cast<int>(head.size()), values, max_seconds, head_set);
  std::vector<double> tail_sizes;
  double tail_sum = 0;
  for (size_t i = 0; i < tail.size(); ++i) {
    tail_sizes.push_back(kTailA * std::pow(static_cast<double>(kHeadSize + 1 + i), kTailB));
    tail_sum += tail_sizes.back();
  }
  for (double& size : tail_sizes) size *= (100.0 - kHeadPercent) / tail_sum;
  Shuffle(&tail, rng);
  std::vector<int64_t> size_order(tail_sizes.size());
  std::iota(size_order.begin(), size_order.end(), int64_t{0});
  Shuffle(&size_order, rng);
  for (size_t i = 0; i < tail.size(); ++i) percent_of[tail[i]] = tail_sizes[size_order[i]];
  // Percentages to counts: at least one job per value, then adjusted to sum to `jobs`.
  std::vector<EstimateBin> bins;
  std::vector<double> percent;
  std::vector<int64_t> counts;
  for (const auto& [seconds, p] : percent_of) {
    bins.push_back({seconds, 0});
    percent.push_back(p);
    counts.push_back(
        std::max<int64_t>(1, std::llround(p * static_cast<double>(jobs) / 100.0)));
  }
  AdjustCounts(jobs, percent, &counts);
  for (size_t i = 0; i < bins.size(); ++i) bins[i].jobs = counts[i];
  return bins;
}

UserEstimates ModelUserEstimates(const std::vector<double>& run_seconds, uint64_t seed) {
  UserEstimates out;
  const size_t n = run_seconds.size();
  out.seconds.assign(n, 0.0);
  double longest = 0;
  for (double r : run_seconds) longest = std::max(longest, r);
  if (!(longest <= kMaxModelledRunSeconds)) {
    throw InputError("modelled user estimates: a run time of " + std::to_string(longest) +
                     " s is beyond the model's range (at most 100 years)");
  }
  out.max_seconds = std::max<int64_t>(kHour, static_cast<int64_t>(std::ceil(longest / kHour)) * kHour);
  if (n == 0) return out;
  std::mt19937_64 rng(seed ^ 0x7E57AF1E2005ull);
  // The estimates, longest first.
  std::vector<double> estimates;
  estimates.reserve(n);
  const std::vector<EstimateBin> bins =
      EstimateHistogram(static_cast<int64_t>(n), out.max_seconds, rng);
  for (auto bin = bins.rbegin(); bin != bins.rend(); ++bin) {
    estimates.insert(estimates.end(), bin->jobs, static_cast<double>(bin->seconds));
  }
  // The jobs, longest first (ties in job order), each with its run time: the bisection below
  // reads them in this order some 24 times on ten million jobs, sequentially so.
  std::vector<std::pair<double, size_t>> jobs(n);
  for (size_t i = 0; i < n; ++i) jobs[i] = {run_seconds[i], i};
  std::sort(jobs.begin(), jobs.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  // The fewest jobs m moved from the shortest values to the maximum so that the k-th longest
  // job is at most the k-th longest estimate for every k (m = n always does: the maximum is at
  // least every run time). Feasibility only grows with m, so m is found by bisection.
  const auto max_value = static_cast<double>(out.max_seconds);
  auto feasible = [&](size_t m) {
    for (size_t k = 0; k < n; ++k) {
      const double estimate = k < m ? max_value : estimates[k - m];
      if (jobs[k].first > estimate) return false;
    }
    return true;
  };
  size_t lo = 0, hi = n;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (feasible(mid)) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  if (lo > 0) {
    estimates.insert(estimates.begin(), lo, max_value);
    estimates.resize(n);
    out.moved_to_max = static_cast<int64_t>(lo);
  }
  // Deal (the authors' shuffle): positions [j, last] hold exactly the estimates not yet dealt
  // that are >= the j-th longest run time; the job draws one of them uniformly.
  size_t last = 0;
  for (size_t j = 0; j < n; ++j) {
    const double run = jobs[j].first;
    last = std::max(last, j);
    while (last + 1 < n && run <= estimates[last + 1]) ++last;
    const size_t k = j + UniformBelow(rng, last - j + 1);
    out.seconds[jobs[j].second] = estimates[k];
    std::swap(estimates[k], estimates[j]);
  }
  return out;
}

}  // namespace clustersim
