// The balanced partition is optimal: compared with brute force over every split.
#include "sim/partition/balanced_partition.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <numeric>
#include <random>

namespace pipetwin {
namespace {

// Smallest bottleneck over all ways to cut n layers into `parts` non-empty groups.
double brute_force(const std::vector<double>& times, int parts) {
  double best = std::numeric_limits<double>::infinity();
  std::vector<int32_t> counts;
  std::function<void(int, int)> recurse = [&](int used, int left) {
    if (left == 1) {
      counts.push_back(static_cast<int32_t>(times.size()) - used);
      best = std::min(best, bottleneck_of(times, counts));
      counts.pop_back();
      return;
    }
    for (int c = 1; used + c <= static_cast<int>(times.size()) - (left - 1); ++c) {
      counts.push_back(c);
      recurse(used + c, left - 1);
      counts.pop_back();
    }
  };
  recurse(0, parts);
  return best;
}

TEST(BalancedPartition, OptimalAgainstBruteForce) {
  std::mt19937 rng(2024);
  for (int trial = 0; trial < 400; ++trial) {
    const int n = std::uniform_int_distribution<int>(1, 12)(rng);
    const int parts = std::uniform_int_distribution<int>(1, n)(rng);
    std::vector<double> times(n);
    for (double& t : times) t = std::uniform_real_distribution<double>(0.0, 10.0)(rng);
    if (trial % 5 == 0) times[rng() % n] = 0;  // zero-cost layers (Input, Dropout)
    const auto counts = balanced_partition(times, parts);
    ASSERT_EQ(static_cast<int>(counts.size()), parts);
    EXPECT_EQ(std::accumulate(counts.begin(), counts.end(), 0), n);
    for (int c : counts) EXPECT_GE(c, 1);
    EXPECT_DOUBLE_EQ(bottleneck_of(times, counts), brute_force(times, parts))
        << "n=" << n << " parts=" << parts;
  }
}

// The scan over every j of the textbook DP, first minimum on ties: the reference the
// binary-searching version must match cut for cut.
std::vector<int32_t> scanning_partition(const std::vector<double>& times, int32_t parts) {
  const int32_t n = static_cast<int32_t>(times.size());
  std::vector<double> prefix(n + 1, 0.0);
  for (int32_t i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + times[i];
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<std::vector<double>> best(parts + 1, std::vector<double>(n + 1, inf));
  std::vector<std::vector<int32_t>> cut(parts + 1, std::vector<int32_t>(n + 1, -1));
  best[0][0] = 0.0;
  for (int32_t g = 1; g <= parts; ++g) {
    for (int32_t i = g; i <= n - (parts - g); ++i) {
      for (int32_t j = g - 1; j < i; ++j) {
        const double candidate = std::max(best[g - 1][j], prefix[i] - prefix[j]);
        if (candidate < best[g][i]) {
          best[g][i] = candidate;
          cut[g][i] = j;
        }
      }
    }
  }
  std::vector<int32_t> counts(parts);
  for (int32_t g = parts, i = n; g > 0; --g) {
    counts[g - 1] = i - cut[g][i];
    i = cut[g][i];
  }
  return counts;
}

TEST(BalancedPartition, SameCutsAsTheFullScanTiesIncluded) {
  std::mt19937 rng(77);
  for (int trial = 0; trial < 2000; ++trial) {
    const int n = std::uniform_int_distribution<int>(1, 60)(rng);
    const int parts = std::uniform_int_distribution<int>(1, n)(rng);
    std::vector<double> times(n);
    for (double& t : times) {
      // Many equal and zero times, and values whose sums round, make ties.
      switch (rng() % 4) {
        case 0:
          t = 0;
          break;
        case 1:
          t = 1;
          break;
        case 2:
          t = 0.1 * static_cast<double>(rng() % 7);
          break;
        default:
          t = std::uniform_real_distribution<double>(0.0, 10.0)(rng);
      }
    }
    EXPECT_EQ(balanced_partition(times, parts), scanning_partition(times, parts))
        << "trial " << trial << " n=" << n << " parts=" << parts;
  }
}

TEST(BalancedPartition, KnownSplit) {
  EXPECT_EQ(balanced_partition({1, 1, 1, 1}, 2), (std::vector<int32_t>{2, 2}));
  EXPECT_EQ(balanced_partition({5, 1, 1, 1, 1, 1}, 2), (std::vector<int32_t>{1, 5}));
  EXPECT_THROW(balanced_partition({1, 2}, 3), std::invalid_argument);
}

}  // namespace
}  // namespace pipetwin
