// The availability profile and the gap index of conservative backfilling
// (policies/availability_profile.h), against a plain transcription: each unit's free amount
// kept as a list of (start, end, delta) holds, evaluated point by point.
#include "policies/availability_profile.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

namespace clustersim {
namespace {

constexpr double kInf = AvailabilityProfile::kInfinity;

struct Hold {
  double start, end;
  int delta;
};

// The free amount of a unit of `capacity` at time t under `holds`.
int FreeAt(int capacity, const std::vector<Hold>& holds, double t) {
  int free = capacity;
  for (const Hold& h : holds) {
    if (h.start <= t && t < h.end) free += h.delta;
  }
  return free;
}

// The earliest t >= from with at least `amount` free throughout [t, t + seconds), by trying
// `from` and every hold boundary after it.
double BruteEarliest(int capacity, const std::vector<Hold>& holds, int amount, double seconds,
                     double from) {
  std::vector<double> candidates = {from};
  for (const Hold& h : holds) {
    if (h.start > from) candidates.push_back(h.start);
    if (h.end > from) candidates.push_back(h.end);
  }
  std::sort(candidates.begin(), candidates.end());
  for (double t : candidates) {
    if (t == kInf) break;
    bool fits = FreeAt(capacity, holds, t) >= amount;
    for (double c : candidates) {
      if (c > t && c < t + seconds) fits = fits && FreeAt(capacity, holds, c) >= amount;
    }
    if (fits) return t;
  }
  return kInf;
}

// Every level x window length x start time: the index's earliest start and the units with room
// then equal the brute search's over every unit's holds, and each unit's profile agrees with it.
void ExpectAnswersOfTheBruteSearch(const GapIndex& index,
                                   const std::vector<AvailabilityProfile>& profiles,
                                   const std::vector<std::vector<Hold>>& holds, int capacity,
                                   double now, const std::string& where) {
  const int units = static_cast<int>(holds.size());
  for (int level = 1; level <= capacity; ++level) {
    for (double seconds : {0.5, 3.0, 17.0}) {
      for (double from : {now, now + 4.5, now + 20.0}) {
        double expected = kInf;
        for (int u = 0; u < units; ++u) {
          const double t = BruteEarliest(capacity, holds[u], level, seconds, from);
          EXPECT_EQ(profiles[u].EarliestSlot(level, seconds, from), t) << where;
          expected = std::min(expected, t);
        }
        ASSERT_EQ(index.Earliest(level, seconds, from), expected) << where << " level " << level;
        if (expected == kInf || expected == from) continue;
        std::vector<int> with_room;
        for (int u = 0; u < units; ++u) {
          if (BruteEarliest(capacity, holds[u], level, seconds, from) == expected) {
            with_room.push_back(u);
          }
        }
        std::vector<int> found;
        index.UnitsStartingAt(level, expected, seconds, &found);
        EXPECT_EQ(found, with_room) << where;
      }
    }
  }
}

TEST(AvailabilityProfile, EarliestSlotSkipsWindowsThatDipBelowTheAmount) {
  // 4 GPUs; 3 held over [10, 20), 2 over [25, 40). 2 GPUs for 10 s: at 0 (free 4 until 10)? No:
  // [0, 10) has 4, [10, 20) has 1. The first 10-s window with >= 2 throughout: [0, 10).
  AvailabilityProfile profile(4);
  profile.Add(10, 20, -3);
  profile.Add(25, 40, -2);
  EXPECT_EQ(profile.EarliestSlot(2, 10, 0), 0);
  // 11 s does not fit before 10; from 20 there is 4 until 25, then 2: [20, 31) has >= 2.
  EXPECT_EQ(profile.EarliestSlot(2, 11, 0), 20);
  // 3 GPUs for 12 s: [0, 10) and [20, 25) are too short; from 40 on, all free.
  EXPECT_EQ(profile.EarliestSlot(3, 12, 0), 40);
  EXPECT_EQ(profile.MinOver(5, 30), 1);
  EXPECT_EQ(profile.NextBreakpoint(12), 20);
}

// Random holds taken and given back on random units, time passing now and then; every
// `check_every` steps the index must answer as the brute search does.
void ExpectRandomChangesAnsweredAsTheBruteSearch(uint64_t seed, int rounds, int max_units,
                                                 int max_capacity, int steps, int check_every) {
  std::mt19937_64 rng(seed);
  for (int round = 0; round < rounds; ++round) {
    const int units = 1 + static_cast<int>(rng() % max_units);
    const int capacity = 1 + static_cast<int>(rng() % max_capacity);
    std::vector<AvailabilityProfile> profiles(units, AvailabilityProfile(capacity));
    std::vector<std::vector<Hold>> holds(units);
    GapIndex index(units, capacity);
    double now = 0;
    for (int step = 0; step < steps; ++step) {
      const int unit = static_cast<int>(rng() % units);
      if (step % 15 == 14) {
        // Time passes: drop the past.
        now += static_cast<double>(rng() % 20);
        for (int u = 0; u < units; ++u) {
          profiles[u].Trim(now);
          index.Trim(u, profiles[u], now);
        }
      } else if (!holds[unit].empty() && rng() % 3 == 0) {
        // Give back a hold (possibly from now on only, as a job ending early).
        const size_t k = rng() % holds[unit].size();
        Hold h = holds[unit][k];
        const double from = std::max(h.start, now);
        if (from < h.end) {
          profiles[unit].Add(from, h.end, -h.delta);
          index.Update(unit, profiles[unit], from, h.end);
          holds[unit].push_back(Hold{from, h.end, -h.delta});
        }
      } else {
        // Take what is free over a window from now on, or more (a job past its plan).
        const double start = now + static_cast<double>(rng() % 50);
        const double end = rng() % 10 == 0 ? kInf : start + 1 + static_cast<double>(rng() % 30);
        const int amount = 1 + static_cast<int>(rng() % capacity);
        profiles[unit].Add(start, end, -amount);
        index.Update(unit, profiles[unit], start, end);
        holds[unit].push_back(Hold{start, end, -amount});
      }
      if (step % check_every != check_every - 1) continue;
      ExpectAnswersOfTheBruteSearch(index, profiles, holds, capacity, now,
                                    "seed " + std::to_string(seed) + " round " +
                                        std::to_string(round) + " step " + std::to_string(step));
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

TEST(GapIndex, EarliestAndTheUnitsWithRoomMatchEveryUnitSearchedPointByPoint) {
  ExpectRandomChangesAnsweredAsTheBruteSearch(/*seed=*/7, /*rounds=*/40, /*max_units=*/5,
                                              /*max_capacity=*/6, /*steps=*/60, /*check_every=*/1);
}

// Many units: each level's tree holds hundreds of gaps, so gaps are inserted at every depth and
// erased from under long paths whose maxima they did or did not set.
TEST(GapIndex, DeepTreesAnswerAsThePointByPointSearch) {
  ExpectRandomChangesAnsweredAsTheBruteSearch(/*seed=*/11, /*rounds=*/3, /*max_units=*/120,
                                              /*max_capacity=*/4, /*steps=*/1500,
                                              /*check_every=*/5);
}

// Conservative backfilling updates the index lazily: changes only widen a unit's dirty range,
// and the index catches up (Update over that range) just before a query. A unit trimmed while
// dirty is not trimmed in the index: its range is widened to [-infinity, now], and the catch-up
// recomputes its gaps from the profile's first key. Queried every few steps, so that several
// changes and trims fall between two catch-ups, the index must answer as the brute search does.
TEST(GapIndex, ALazyCatchUpAfterTrimsOfDirtyUnitsAnswersAsThePointByPointSearch) {
  std::mt19937_64 rng(11);
  int dirty_trims = 0;
  for (int round = 0; round < 40; ++round) {
    const int units = 1 + static_cast<int>(rng() % 5);
    const int capacity = 1 + static_cast<int>(rng() % 6);
    std::vector<AvailabilityProfile> profiles(units, AvailabilityProfile(capacity));
    std::vector<std::vector<Hold>> holds(units);
    std::vector<std::pair<double, double>> dirty(units, {kInf, -kInf});
    GapIndex index(units, capacity);
    auto change = [&](int unit, double start, double end, int delta) {
      profiles[unit].Add(start, end, delta);
      holds[unit].push_back(Hold{start, end, delta});
      dirty[unit].first = std::min(dirty[unit].first, start);
      dirty[unit].second = std::max(dirty[unit].second, end);
    };
    double now = 0;
    for (int step = 0; step < 80; ++step) {
      const int unit = static_cast<int>(rng() % units);
      if (step % 7 == 6) {
        now += static_cast<double>(rng() % 20);
        for (int u = 0; u < units; ++u) {
          profiles[u].Trim(now);
          if (dirty[u].first > dirty[u].second) {
            index.Trim(u, profiles[u], now);
          } else {
            dirty[u].first = -kInf;
            dirty[u].second = std::max(dirty[u].second, now);
            ++dirty_trims;
          }
        }
      } else if (!holds[unit].empty() && rng() % 3 == 0) {
        const Hold h = holds[unit][rng() % holds[unit].size()];
        const double from = std::max(h.start, now);
        if (from < h.end) change(unit, from, h.end, -h.delta);
      } else {
        const double start = now + static_cast<double>(rng() % 50);
        const double end = rng() % 10 == 0 ? kInf : start + 1 + static_cast<double>(rng() % 30);
        change(unit, start, end, -(1 + static_cast<int>(rng() % capacity)));
      }
      if (step % 5 != 4) continue;
      for (int u = 0; u < units; ++u) {
        if (dirty[u].first > dirty[u].second) continue;
        index.Update(u, profiles[u], dirty[u].first, dirty[u].second);
        dirty[u] = {kInf, -kInf};
      }
      // Caught up, the index keeps no past: no gap ends at or before the last trim.
      for (int u = 0; u < units && step > 6; ++u) {
        for (int level = 1; level <= capacity; ++level) {
          index.ForEachGapOverlapping(u, level, -kInf, now, [&](double a, double b) {
            EXPECT_GT(b, now) << "round " << round << " step " << step << " unit " << u
                              << " level " << level << " gap [" << a << ", " << b << ")";
          });
        }
      }
      ExpectAnswersOfTheBruteSearch(index, profiles, holds, capacity, now,
                                    "round " + std::to_string(round) + " step " +
                                        std::to_string(step));
    }
  }
  EXPECT_GT(dirty_trims, 100);  // the case under test happened
}

}  // namespace
}  // namespace clustersim
