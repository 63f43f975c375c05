// One-dimensional bin packing: hand-worked packings, Johnson's instance on which FFD uses 11/9 of
// the optimum, and a seeded property test of Dósa's bound FFD <= 11/9 OPT + 6/9 against the exact
// optimum from two independent exact methods (dynamic program and integer program), which would
// fail for first fit without sorting.
#include "sim/alloc/bin_packing.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

namespace clustersim {
namespace {

// Every item in a bin, no bin over capacity, bins numbered 0..bins-1 with none empty.
void ExpectFeasible(const BinPacking& instance, const Packing& packing) {
  ASSERT_EQ(packing.bin_of.size(), instance.sizes.size());
  std::vector<int64_t> fill(packing.bins, 0);
  for (size_t i = 0; i < instance.sizes.size(); ++i) {
    ASSERT_GE(packing.bin_of[i], 0);
    ASSERT_LT(packing.bin_of[i], packing.bins);
    fill[packing.bin_of[i]] += instance.sizes[i];
  }
  for (int64_t f : fill) {
    EXPECT_GT(f, 0);
    EXPECT_LE(f, instance.capacity);
  }
}

TEST(BinPacking, FirstFitDecreasingPacksByHand) {
  // Sorted 6 5 4 3 2 into bins of 10: 6 -> b0, 5 -> b1, 4 -> b0 (full), 3 -> b1, 2 -> b1 (full).
  const BinPacking instance{10, {3, 6, 2, 5, 4}};
  const Packing ffd = FirstFitDecreasing(instance);
  ExpectFeasible(instance, ffd);
  EXPECT_EQ(ffd.bins, 2);
  EXPECT_EQ(ffd.bin_of, (std::vector<int>{1, 0, 1, 1, 0}));
  // In the given order first fit puts 3, 6 in b0 (9), 2 in b1, 5 in b1 (7), 4 in b2.
  const Packing ff = FirstFit(instance);
  ExpectFeasible(instance, ff);
  EXPECT_EQ(ff.bins, 3);
  EXPECT_EQ(BinsLowerBound(instance), 2);  // 20 / 10
}

TEST(BinPacking, FfdUsesElevenNinthsOfTheOptimumOnJohnsonsInstance) {
  // Johnson's instance (bins of 1000, epsilon 10): six of 510, six of 270, six of 260, twelve of
  // 230. Optimum 9: six bins {510, 260, 230} and three {270, 270, 230, 230}. FFD: six bins
  // {510, 270} with 220 left, two bins of three 260s, three bins of four 230s: 11 = 11/9 x 9.
  BinPacking instance{1000, {}};
  for (int i = 0; i < 6; ++i) instance.sizes.push_back(510);
  for (int i = 0; i < 6; ++i) instance.sizes.push_back(270);
  for (int i = 0; i < 6; ++i) instance.sizes.push_back(260);
  for (int i = 0; i < 12; ++i) instance.sizes.push_back(230);
  const Packing ffd = FirstFitDecreasing(instance);
  ExpectFeasible(instance, ffd);
  EXPECT_EQ(ffd.bins, 11);
  const auto exact = ExactBinPackingIlp(instance, 60);
  ASSERT_TRUE(exact.has_value());
  ExpectFeasible(instance, *exact);
  EXPECT_EQ(exact->bins, 9);
  EXPECT_LE(ffd.bins, FfdBound(exact->bins));
}

TEST(BinPacking, FirstFitInArrivalOrderBreaksTheFfdBoundWhereFfdDoesNot) {
  // Bins of 252; six items of 37 (1/7 + e), six of 85 (1/3 + e), six of 127 (1/2 + e), small ones
  // first. First fit: one bin of six 37s, three of two 85s, six single 127s = 10 bins. The
  // optimum and FFD: six bins {127, 85, 37} = 249. 10 > 11/9 x 6 + 6/9 = 8.
  BinPacking instance{252, {}};
  for (int64_t size : {37, 85, 127}) {
    for (int i = 0; i < 6; ++i) instance.sizes.push_back(size);
  }
  EXPECT_EQ(FirstFit(instance).bins, 10);
  EXPECT_EQ(FirstFitDecreasing(instance).bins, 6);
  const auto dp = ExactBinPackingDp(instance);
  ASSERT_TRUE(dp.has_value());
  EXPECT_EQ(dp->bins, 6);
  EXPECT_GT(FirstFit(instance).bins, FfdBound(6));
}

// Seeded instances from four families: uniform sizes; sizes between a fifth and a half of a bin
// (where FFD is weakest); GPU requests of 1, 2, 4 or 8 on 8-GPU nodes; and first fit's bad case
// (small, medium and large items in increasing order, sizes perturbed).
std::vector<BinPacking> Instances(uint64_t seed, int count) {
  std::mt19937_64 rng(seed);
  auto uniform = [&](int64_t lo, int64_t hi) { return lo + static_cast<int64_t>(rng() % (hi - lo + 1)); };
  std::vector<BinPacking> out;
  for (int k = 0; k < count; ++k) {
    BinPacking instance;
    const int n = static_cast<int>(uniform(6, 16));
    switch (k % 4) {
      case 0:
        instance.capacity = uniform(10, 100);
        for (int i = 0; i < n; ++i) instance.sizes.push_back(uniform(1, instance.capacity));
        break;
      case 1:
        instance.capacity = uniform(60, 120);
        for (int i = 0; i < n; ++i) {
          instance.sizes.push_back(uniform(instance.capacity / 5 + 1, instance.capacity / 2));
        }
        break;
      case 2: {
        instance.capacity = 8;
        const int64_t gpus[] = {1, 1, 1, 2, 2, 4, 8};
        for (int i = 0; i < n; ++i) instance.sizes.push_back(gpus[rng() % 7]);
        break;
      }
      default: {
        instance.capacity = 252;
        for (int64_t base : {36, 84, 126}) {
          for (int i = 0; i < 6; ++i) instance.sizes.push_back(base + uniform(1, 2));
        }
        break;
      }
    }
    out.push_back(instance);
  }
  return out;
}

TEST(BinPacking, FfdNeverExceedsDosasBoundOnSeededInstancesSolvedExactly) {
  const std::vector<BinPacking> instances = Instances(2007, 240);
  int first_fit_violations = 0;
  for (size_t k = 0; k < instances.size(); ++k) {
    const BinPacking& instance = instances[k];
    SCOPED_TRACE("instance " + std::to_string(k));
    const auto opt = ExactBinPackingDp(instance);
    ASSERT_TRUE(opt.has_value());
    ExpectFeasible(instance, *opt);
    const Packing ffd = FirstFitDecreasing(instance);
    ExpectFeasible(instance, ffd);
    EXPECT_GE(ffd.bins, opt->bins);
    EXPECT_LE(ffd.bins, FfdBound(opt->bins)) << "FFD " << ffd.bins << ", OPT " << opt->bins;
    first_fit_violations += FirstFit(instance).bins > FfdBound(opt->bins);
  }
  // The property is not vacuous: the same check fails for first fit without sorting.
  EXPECT_GT(first_fit_violations, 0);
}

TEST(BinPacking, IntegerProgramAndDynamicProgramAgreeOnTheOptimum) {
  for (const BinPacking& instance : Instances(31, 80)) {
    const auto dp = ExactBinPackingDp(instance);
    const auto ilp = ExactBinPackingIlp(instance, 60);
    ASSERT_TRUE(dp.has_value());
    ASSERT_TRUE(ilp.has_value());
    ExpectFeasible(instance, *ilp);
    EXPECT_EQ(dp->bins, ilp->bins);
    EXPECT_TRUE(ilp->optimal);
    EXPECT_GE(dp->bins, BinsLowerBound(instance));
  }
}

TEST(BinPacking, GeneticAlgorithmIsWithinOneBinOfTheOptimumAndNeverWorseThanFfd) {
  const GeneticOptions options;  // 60 generations of 40
  int at_optimum = 0;
  const std::vector<BinPacking> instances = Instances(77, 160);
  for (const BinPacking& instance : instances) {
    const int opt = ExactBinPackingDp(instance)->bins;
    const Packing ga = GeneticBinPacking(instance, options);
    ExpectFeasible(instance, ga);
    EXPECT_LE(ga.bins, FirstFitDecreasing(instance).bins);
    EXPECT_LE(ga.bins, opt + 1);
    at_optimum += ga.bins == opt;
  }
  // docs/allocators.md states the share (measured: see the bench); the test holds it at 90 %.
  EXPECT_GE(at_optimum, instances.size() * 9 / 10);
}

TEST(BinPacking, GeneticAlgorithmIsDeterministicForASeed) {
  const BinPacking instance = Instances(5, 2)[1];
  GeneticOptions options;
  options.seed = 42;
  EXPECT_EQ(GeneticBinPacking(instance, options).bin_of,
            GeneticBinPacking(instance, options).bin_of);
}

}  // namespace
}  // namespace clustersim
