// The balanced partition is optimal: compared with brute force over every split.
#include "sim/partition/balanced_partition.h"

#include <gtest/gtest.h>

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

TEST(BalancedPartition, KnownSplit) {
  EXPECT_EQ(balanced_partition({1, 1, 1, 1}, 2), (std::vector<int32_t>{2, 2}));
  EXPECT_EQ(balanced_partition({5, 1, 1, 1, 1, 1}, 2), (std::vector<int32_t>{1, 5}));
  EXPECT_THROW(balanced_partition({1, 2}, 3), std::invalid_argument);
}

}  // namespace
}  // namespace pipetwin
