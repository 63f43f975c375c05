// Random draws that give the same sequence on every standard library (the distributions of
// <random> are implementation-defined; the engines are not).
#ifndef CLUSTERSIM_SIM_UTIL_RANDOM_H_
#define CLUSTERSIM_SIM_UTIL_RANDOM_H_

#include <cstdint>
#include <limits>
#include <random>

namespace clustersim {

// Uniform integer in [0, n) without modulo bias: draws below the largest multiple of n that fits
// in 64 bits are kept, others rejected. REQUIRES: n > 0.
inline uint64_t UniformBelow(std::mt19937_64& rng, uint64_t n) {
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  const uint64_t limit = kMax - kMax % n;
  uint64_t x = rng();
  while (x >= limit) x = rng();
  return x % n;
}

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_UTIL_RANDOM_H_
