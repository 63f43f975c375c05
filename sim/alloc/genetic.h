// The genetic search over orders shared by the allocators (GeneticOptions in bin_packing.h): a
// chromosome is a permutation of n items, decoded by a greedy rule the caller supplies, which also
// scores it (higher is better). Seeded: the same options give the same result.
#ifndef CLUSTERSIM_SIM_ALLOC_GENETIC_H_
#define CLUSTERSIM_SIM_ALLOC_GENETIC_H_

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "sim/alloc/bin_packing.h"

namespace clustersim {

// Evolves permutations of 0..n-1 starting from `first` (the greedy order, kept as the first
// individual) and random shuffles. `fitness(order, &decoded)` decodes and scores one order.
// Returns the best fitness found and leaves its decoded result in *best. Uniform random draws
// come from std::mt19937_64 seeded with options.seed, used only through its raw output (the
// standard fixes that sequence; the library's distributions are not portable).
template <typename Result, typename Fitness>
double EvolveOrders(int n, const std::vector<int>& first, const GeneticOptions& options,
                    Fitness&& fitness, Result* best) {
  std::mt19937_64 rng(options.seed);
  auto below = [&rng](uint64_t bound) { return bound <= 1 ? uint64_t{0} : rng() % bound; };
  const int size = std::max(2, options.population);
  struct Individual {
    std::vector<int> order;
    double score = 0;
  };
  std::vector<Individual> population(size);
  Result decoded;
  double best_score = 0;
  bool have_best = false;
  auto evaluate = [&](Individual& individual) {
    individual.score = fitness(individual.order, &decoded);
    if (!have_best || individual.score > best_score) {
      best_score = individual.score;
      *best = decoded;
      have_best = true;
    }
  };
  for (int p = 0; p < size; ++p) {
    population[p].order = first;
    if (p > 0) {
      for (int i = n - 1; i > 0; --i) std::swap(population[p].order[i], population[p].order[below(i + 1)]);
    }
    evaluate(population[p]);
  }
  std::vector<Individual> next(size);
  std::vector<char> taken(n);
  const int elite = std::clamp(options.elite, 0, size);
  for (int g = 0; g < options.generations; ++g) {
    std::stable_sort(population.begin(), population.end(),
                     [](const Individual& a, const Individual& b) { return a.score > b.score; });
    for (int e = 0; e < elite; ++e) next[e] = population[e];
    auto tournament = [&]() -> const Individual& {
      const Individual& a = population[below(size)];
      const Individual& b = population[below(size)];
      return a.score >= b.score ? a : b;
    };
    for (int p = elite; p < size; ++p) {
      const Individual& mother = tournament();
      const Individual& father = tournament();
      // Order crossover (OX1): a slice of the mother, the rest in the father's order.
      std::vector<int>& child = next[p].order;
      child.assign(n, -1);
      std::fill(taken.begin(), taken.end(), 0);
      int lo = static_cast<int>(below(n));
      int hi = static_cast<int>(below(n));
      if (lo > hi) std::swap(lo, hi);
      for (int i = lo; i <= hi && n > 0; ++i) {
        child[i] = mother.order[i];
        taken[child[i]] = 1;
      }
      int write = (hi + 1) % std::max(n, 1);
      for (int k = 0; k < n; ++k) {
        const int gene = father.order[(hi + 1 + k) % n];
        if (taken[gene]) continue;
        child[write] = gene;
        write = (write + 1) % n;
      }
      // Mutation: a swap, with probability `mutation` (drawn on a 2^20 grid).
      if (n > 1 && static_cast<double>(below(1 << 20)) < options.mutation * (1 << 20)) {
        std::swap(child[below(n)], child[below(n)]);
      }
      evaluate(next[p]);
    }
    std::swap(population, next);
  }
  return best_score;
}

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_ALLOC_GENETIC_H_
