// Users' runtime estimates for traces that record none (docs/backfilling.md#user-estimates): the
// model of Tsafrir, Etsion and Feitelson, "Modeling User Runtime Estimates", JSSPP 2005, LNCS 3834,
// pp. 1-35, with the constants of the authors' own implementation (est_model.hh / est_model.cc of
// the model's page, www.cs.huji.ac.il/labs/parallel/workload/m_tsafrir05/). Backfilling policies
// plan with these estimates when the trace gives a job no wall time (policies/backfill.h).
//
// The model is modal: users pick round values, and 20 values (the "head") serve 89 % of the jobs.
// 1. The number of distinct values K grows with the number of jobs n: piecewise linear through
//    (n, K) = (0, 0), (20, 10), (200, 20), (1000, 35), (10000, 90), (70000, 340), (250000, 565),
//    565 beyond.
// 2. The head: the system's longest allowed estimate M, the 15 values found among the 20 most
//    popular of all four traces studied that are below M (5, 10, 15, 20, 30 min, 1, 2, 3, 4, 5, 6,
//    8, 10, 12, 18 h), then round values counting down from M in multiples of 200 h, 100 h, 50 h,
//    10 h, 5 h, 2 h, 1 h, 20 min, 10 min, 5 min until there are 20 (fewer when M is small).
// 3. Head popularity: rank x = 2..20 gets 14.0491 e^(-0.177531 x) + 0.462513 % of the jobs; M is
//    rank 1 and gets the rest of 89 % (21.7 % with 20 head values). Which other head value gets
//    which rank follows the authors' table of observed (time rank -> popularity rank) pairs of
//    four traces (SDSC SP2, CTC SP2, KTH SP2, LANL Blue), drawn at random as their code does.
// 4. The tail: K - 20 more values at y = (a - 1) x / (a - x) of M, x = i / (K - 20), a = 1 +
//    12.1039 K^-0.6026, in whole minutes (shifted by up to 30 s to avoid a value already taken),
//    sharing the remaining 11 % by 795.6 r^-2.267 for popularity ranks r = 21, 22, ..., matched to
//    the values at random.
// 5. Percentages become job counts (at least 1 per value, then adjusted to sum to n as the
//    authors' code does), and the estimates are dealt to the jobs longest first: each job gets
//    one drawn uniformly among the estimates not yet dealt that are at least its run time. So no
//    estimate is below its job's run time, and the estimates' histogram is the model's.
// Where the trace has more long jobs than the histogram has long values for (the authors' code
// stops with an error then, advising more jobs at M), the fewest jobs needed are moved from the
// shortest values to M.
//
// Every draw comes from one std::mt19937_64 seeded from the run's seed, through UniformBelow.
#ifndef CLUSTERSIM_POLICIES_USER_ESTIMATES_H_
#define CLUSTERSIM_POLICIES_USER_ESTIMATES_H_

#include <cstdint>
#include <random>
#include <vector>

namespace clustersim {

// K, the number of distinct estimate values for `jobs` jobs (step 1). REQUIRES: jobs >= 0.
int EstimateValueCount(int64_t jobs);

// The head's times in seconds (step 2): [0] is `max_seconds`, the others ascending.
// REQUIRES: max_seconds >= 3600.
std::vector<int64_t> HeadEstimates(int64_t max_seconds);

struct EstimateBin {
  int64_t seconds = 0;
  int64_t jobs = 0;
};
// The model's histogram for `jobs` jobs (steps 1-5 but the dealing), by ascending time; the job
// counts sum to `jobs`. REQUIRES: jobs >= 0, max_seconds >= 3600.
std::vector<EstimateBin> EstimateHistogram(int64_t jobs, int64_t max_seconds, std::mt19937_64& rng);

struct UserEstimates {
  std::vector<double> seconds;  // per job, in the order of the run times given
  int64_t max_seconds = 0;      // M
  int64_t moved_to_max = 0;     // jobs moved to M because the histogram was too short (above)
};
// Estimates for jobs of these run times (seconds >= 0), with M = the longest run time rounded up
// to a whole hour (at least 1 h): the smallest limit in whole hours under which every job could
// have run. Deterministic for a seed. Run times above kMaxModelledRunSeconds are outside the
// model (its largest estimate is a whole number of hours held in 64 bits): InputError.
inline constexpr double kMaxModelledRunSeconds = 100.0 * 365.25 * 86400;  // 100 years
UserEstimates ModelUserEstimates(const std::vector<double>& run_seconds, uint64_t seed);

}  // namespace clustersim

#endif  // CLUSTERSIM_POLICIES_USER_ESTIMATES_H_
