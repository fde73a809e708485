// The sampled run against the closed form's expectation (many failures, few, and a 16K-GPU
// scale), against a direct simulation that draws every failure time, and against exact values
// where the spread has them: no failures at all, and a 5th percentile that is a failure-free
// run.
#include "sim/goodput/goodput_monte_carlo.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "goodput_plans.h"

namespace pipetwin {
namespace {

using testing::plan_of;

void expect_ordered(const MonteCarloSummary& s) {
  EXPECT_LE(s.p5_s, s.p50_s);
  EXPECT_LE(s.p50_s, s.p95_s);
}

TEST(GoodputMonteCarlo, AgreesWithTheClosedFormWithManyFailures) {
  RunPlan plan = plan_of(20'000, 10, 2'000, 30, 300);  // ~110 failures a run
  plan.checkpoint_persist_s = 60;
  const int64_t interval = optimal_interval_steps(plan);
  const GoodputEstimate e = expected_goodput(plan, interval);
  // Restarts and rework are each far more than the error allowed, so leaving either out fails.
  EXPECT_GT(e.restart_s, 0.1 * e.expected_s);
  EXPECT_GT(e.lost_work_s, 0.05 * e.expected_s);
  const MonteCarloSummary s = monte_carlo_goodput(plan, interval, 10'000, 7);
  EXPECT_EQ(s.runs, 10'000);
  EXPECT_EQ(s.seed, 7u);
  // The sampling error is ~0.05% here; 0.5% also catches the asynchronous window's 2.5%.
  EXPECT_NEAR(s.mean_s, e.expected_s, 0.005 * e.expected_s);
  EXPECT_NEAR(s.mean_failures, e.failures, 0.01 * e.failures);
  expect_ordered(s);
}

TEST(GoodputMonteCarlo, AgreesWithTheClosedFormWithFewFailures) {
  const RunPlan plan = plan_of(1'000, 10, 5'000, 60, 1'800);  // ~2 failures a run
  const GoodputEstimate e = expected_goodput(plan, 100);
  EXPECT_GT(e.restart_s, 0.2 * e.expected_s);
  const MonteCarloSummary s = monte_carlo_goodput(plan, 100, 10'000, 11);
  EXPECT_NEAR(s.mean_s, e.expected_s, 0.02 * e.expected_s);
  EXPECT_NEAR(s.mean_failures, e.failures, 0.05 * e.failures);
  expect_ordered(s);
  // e^{-lambda (10,000 + 540)} = 12% of the runs never fail: the 5th percentile is one of them.
  EXPECT_EQ(s.p5_s, 10'000 + 9 * 60.0);
  EXPECT_GT(s.p95_s, s.p5_s + 3 * 1'800);
}

TEST(GoodputMonteCarlo, AgreesAtSixteenThousandGpuScale) {
  // ~1e6 steps of 10 s at a 3-hour MTTF: ~1,000 failures a run.
  const RunPlan plan = plan_of(1'000'000, 10, 3 * 3'600, 60, 600);
  const int64_t interval = optimal_interval_steps(plan);
  const GoodputEstimate e = expected_goodput(plan, interval);
  EXPECT_GT(e.failures, 900);
  const MonteCarloSummary s = monte_carlo_goodput(plan, interval, 1'000, 3);
  EXPECT_NEAR(s.mean_s, e.expected_s, 0.005 * e.expected_s);
  EXPECT_NEAR(s.mean_failures, e.failures, 0.01 * e.failures);
  expect_ordered(s);
}

// Every failure drawn as it comes: an exponential time to the next failure, which either
// falls inside the segment (lose that much, restart, try again) or lets it finish.
double simulate_directly(const RunPlan& plan, int64_t interval, std::mt19937_64& rng) {
  std::exponential_distribution<double> next_failure(plan.failures_per_s);
  double time_s = 0;
  for (int64_t done = 0; done < plan.steps; done += interval) {
    const int64_t steps = std::min(interval, plan.steps - done);
    const double length_s = static_cast<double>(steps) * plan.step_s +
                            (done + steps < plan.steps ? plan.checkpoint_block_s : 0);
    for (double at = next_failure(rng); at < length_s; at = next_failure(rng)) {
      time_s += at + plan.restart_s;
    }
    time_s += length_s;
  }
  return time_s;
}

TEST(GoodputMonteCarlo, ClosedFormMatchesADirectSimulation) {
  const RunPlan plan = plan_of(1'050, 10, 2'000, 60, 300);  // ~6 failures a run
  std::mt19937_64 rng(5);
  double sum = 0;
  constexpr int kRuns = 20'000;
  for (int run = 0; run < kRuns; ++run) sum += simulate_directly(plan, 100, rng);
  const double expected = expected_goodput(plan, 100).expected_s;
  EXPECT_NEAR(sum / kRuns, expected, 0.01 * expected);
  EXPECT_NEAR(monte_carlo_goodput(plan, 100, 20'000, 5).mean_s, expected, 0.01 * expected);
}

TEST(GoodputMonteCarlo, SameSeedSameNumbers) {
  const RunPlan plan = plan_of(5'000, 10, 3'600, 60, 300);
  const MonteCarloSummary a = monte_carlo_goodput(plan, 120, 500, 42);
  const MonteCarloSummary b = monte_carlo_goodput(plan, 120, 500, 42);
  EXPECT_EQ(a.mean_s, b.mean_s);
  EXPECT_EQ(a.p5_s, b.p5_s);
  EXPECT_EQ(a.p50_s, b.p50_s);
  EXPECT_EQ(a.p95_s, b.p95_s);
  EXPECT_EQ(a.mean_failures, b.mean_failures);
  EXPECT_NE(monte_carlo_goodput(plan, 120, 500, 43).mean_s, a.mean_s);
}

TEST(GoodputMonteCarlo, WithoutFailuresEveryRunIsTheSame) {
  RunPlan plan = plan_of(1'000, 10, 1, 60, 300);
  plan.failures_per_s = 0;
  const MonteCarloSummary s = monte_carlo_goodput(plan, 300, 100, 1);
  const double exact = 10'000 + 3 * 60.0;
  EXPECT_DOUBLE_EQ(s.mean_s, exact);
  EXPECT_EQ(s.p5_s, exact);
  EXPECT_EQ(s.p50_s, exact);
  EXPECT_EQ(s.p95_s, exact);
  EXPECT_EQ(s.mean_failures, 0);
  EXPECT_EQ(monte_carlo_goodput(plan, 300, 0, 1).runs, 0);
}

}  // namespace
}  // namespace pipetwin
