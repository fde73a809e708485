// The closed form of a checkpointed run against independent truths: the segment formula
// (1/lambda + R)(e^{lambda L} - 1) written out, exact totals without failures, the first-order
// lost work lambda L^2 / 2 at small rates, and brute-force scans for the optimal intervals.
#include "sim/goodput/goodput_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "goodput_plans.h"

namespace pipetwin {
namespace {

RunPlan hourly_failures() {
  RunPlan plan;
  plan.steps = 1'200;
  plan.step_s = 10;
  plan.failures_per_s = 1 / 3600.0;
  plan.checkpoint_block_s = 60;
  plan.restart_s = 300;
  return plan;
}

void expect_parts_sum(const GoodputEstimate& e) {
  EXPECT_DOUBLE_EQ(e.compute_s + e.checkpoint_s + e.restart_s + e.lost_work_s, e.expected_s);
  EXPECT_GE(e.lost_work_s, 0);
  EXPECT_DOUBLE_EQ(e.ettr, e.compute_s / e.expected_s);
}

TEST(GoodputModel, ZeroFailuresCostComputeAndCheckpointsExactly) {
  RunPlan plan = hourly_failures();
  plan.failures_per_s = 0;
  const int64_t best = optimal_interval_steps(plan);
  EXPECT_EQ(best, plan.steps);  // nothing to protect: no checkpoint
  const GoodputEstimate none = expected_goodput(plan, best);
  EXPECT_EQ(none.checkpoints, 0);
  EXPECT_EQ(none.expected_s, 1'200 * 10.0);
  EXPECT_EQ(none.ettr, 1);

  const GoodputEstimate every_100 = expected_goodput(plan, 100);
  EXPECT_EQ(every_100.checkpoints, 11);
  EXPECT_DOUBLE_EQ(every_100.expected_s, 1'200 * 10.0 + 11 * 60.0);
  EXPECT_EQ(every_100.failures, 0);
  EXPECT_EQ(every_100.restart_s, 0);
  EXPECT_EQ(every_100.lost_work_s, 0);
  EXPECT_TRUE(std::isinf(optimal_interval_s(0, 60)));
  EXPECT_TRUE(std::isinf(young_interval_s(0, 60)));
}

TEST(GoodputModel, AsynchronousCheckpointWithoutFailuresCostsOnlyItsSnapshot) {
  RunPlan plan = hourly_failures();
  plan.failures_per_s = 0;
  plan.checkpoint_block_s = 2;      // the snapshot to host memory
  plan.checkpoint_persist_s = 120;  // the upload that runs behind training
  const GoodputEstimate e = expected_goodput(plan, 150);
  EXPECT_EQ(e.checkpoints, 7);
  EXPECT_DOUBLE_EQ(e.expected_s, 1'200 * 10.0 + 7 * 2.0);
  EXPECT_DOUBLE_EQ(e.checkpoint_s, 7 * 2.0);
}

TEST(GoodputModel, EachSegmentTakesTheClosedForm) {
  const RunPlan plan = hourly_failures();
  const double lambda = plan.failures_per_s;
  const double full = 100 * 10.0 + 60;  // 11 segments with their checkpoint
  const double last = 100 * 10.0;       // and the last without
  const double per_failure = 1 / lambda + 300;
  const GoodputEstimate e = expected_goodput(plan, 100);
  EXPECT_NEAR(e.expected_s,
              11 * per_failure * (std::exp(lambda * full) - 1) +
                  per_failure * (std::exp(lambda * last) - 1),
              1e-9 * e.expected_s);
  EXPECT_NEAR(e.failures, 11 * (std::exp(lambda * full) - 1) + (std::exp(lambda * last) - 1),
              1e-12);
  EXPECT_DOUBLE_EQ(e.restart_s, e.failures * 300);
  EXPECT_DOUBLE_EQ(e.checkpoint_s, 11 * 60.0);
  EXPECT_DOUBLE_EQ(e.compute_s, 12'000);
  expect_parts_sum(e);

  // An asynchronous checkpoint's window adds to every restart; a shorter last segment.
  RunPlan async = plan;
  async.checkpoint_persist_s = 90;
  async.steps = 1'150;
  const GoodputEstimate a = expected_goodput(async, 100);
  EXPECT_EQ(a.checkpoints, 11);
  const double a_per_failure = 1 / lambda + 300 + 90;
  EXPECT_NEAR(a.expected_s,
              a_per_failure * (11 * (std::exp(lambda * full) - 1) + std::exp(lambda * 500) - 1),
              1e-9 * a.expected_s);
  EXPECT_DOUBLE_EQ(a.restart_s, a.failures * 390);
  expect_parts_sum(a);
}

TEST(GoodputModel, IntervalsAreClampedToTheRun) {
  const RunPlan plan = hourly_failures();
  EXPECT_EQ(expected_goodput(plan, 0).interval_steps, 1);
  EXPECT_EQ(expected_goodput(plan, 0).checkpoints, 1'199);
  EXPECT_EQ(expected_goodput(plan, 5'000).interval_steps, 1'200);
  EXPECT_EQ(expected_goodput(plan, 5'000).checkpoints, 0);
  EXPECT_EQ(expected_goodput(RunPlan{}, 10).expected_s, 0);
}

TEST(GoodputModel, SmallRatesLoseHalfASegmentPerFailure) {
  // At lambda L << 1 a segment sees lambda L failures, each losing L / 2 on average: lost work
  // lambda L^2 / 2 to first order, where the direct (e^{lambda L} - 1) / lambda - L cancels.
  RunPlan plan = hourly_failures();
  for (const double lambda : {1e-9, 1e-12, 1e-15}) {
    plan.failures_per_s = lambda;
    const GoodputEstimate e = expected_goodput(plan, 100);
    const double first_order = lambda / 2 * (11 * 1060.0 * 1060 + 1000.0 * 1000);
    EXPECT_NEAR(e.lost_work_s, first_order, 1e-5 * first_order) << lambda;
    EXPECT_NEAR(e.failures, lambda * (11 * 1060 + 1000), 1e-5 * e.failures) << lambda;
    expect_parts_sum(e);
  }
}

TEST(GoodputModel, PartsSumToTheExpectedTime) {
  RunPlan plan = hourly_failures();
  for (const double mttf_s : {600.0, 3600.0, 86'400.0}) {
    for (const int64_t interval : {1, 7, 100, 1'199, 1'200}) {
      plan.failures_per_s = 1 / mttf_s;
      plan.checkpoint_persist_s = 30;
      const GoodputEstimate e = expected_goodput(plan, interval);
      expect_parts_sum(e);
      EXPECT_GT(e.lost_work_s, 0);
      EXPECT_LT(e.ettr, 1);
    }
  }
}

// Cost per unit of work of an endless run checkpointed every tau seconds, R aside.
double cost_per_work(double lambda, double block_s, double tau) {
  return std::expm1(lambda * (tau + block_s)) / tau;
}

TEST(GoodputModel, OptimalIntervalMinimisesCostPerWork) {
  for (const auto& [lambda, block_s] : {std::pair{1 / 10'800.0, 60.0}, std::pair{1 / 600.0, 300.0},
                                        std::pair{1 / 100.0, 500.0}, std::pair{1e-6, 10.0}}) {
    const double tau = optimal_interval_s(lambda, block_s);
    // The exact form through the other branch of lambert_w0.
    EXPECT_NEAR(tau, (1 + lambert_w0(-std::exp(-lambda * block_s - 1))) / lambda, 1e-9 * tau);
    const double spacing = 5 * young_interval_s(lambda, block_s) / 100'000;
    double best_tau = 0;
    double best = std::numeric_limits<double>::infinity();
    for (int i = 1; i <= 100'000; ++i) {
      const double c = cost_per_work(lambda, block_s, i * spacing);
      if (c < best) {
        best = c;
        best_tau = i * spacing;
      }
    }
    EXPECT_GE(best, cost_per_work(lambda, block_s, tau) * (1 - 1e-15)) << lambda;
    EXPECT_NEAR(best_tau, tau, spacing) << lambda;
  }
}

TEST(GoodputModel, OptimalIntervalApproachesYoungsForCheapCheckpoints) {
  // tau = sqrt(2 C / lambda) - 2 C / 3 + O(C sqrt(lambda C)): Young's leading term, and the
  // next one resolved even at lambda C = 1e-10, where it is 5e-6 of tau.
  for (const double lambda_c : {1e-2, 1e-4, 1e-7, 1e-10}) {
    const double block_s = 60;
    const double lambda = lambda_c / block_s;
    const double tau = optimal_interval_s(lambda, block_s);
    const double young = young_interval_s(lambda, block_s);
    EXPECT_NEAR(tau / young, 1, std::sqrt(2 * lambda_c)) << lambda_c;
    EXPECT_NEAR(tau, young - 2 * block_s / 3, block_s * std::sqrt(lambda_c)) << lambda_c;
  }
  EXPECT_EQ(optimal_interval_s(1e-3, 0), 0);  // free checkpoints: checkpoint always
}

// The interval whose expected_goodput is lowest, by trying every one (ties to the longer).
int64_t scan_every_interval(const RunPlan& plan) {
  int64_t best = 0;
  double best_s = std::numeric_limits<double>::infinity();
  for (int64_t interval = 1; interval <= plan.steps; ++interval) {
    const double s = expected_goodput(plan, interval).expected_s;
    if (s <= best_s) {
      best = interval;
      best_s = s;
    }
  }
  return best;
}

using testing::plan_of;

TEST(GoodputModel, OptimalIntervalStepsMatchesABruteForceScan) {
  // The second: the nearest whole steps to the endless run's optimum (53) lose to 50, which
  // cuts the run into 40 equal segments. The fourth: too short a run to checkpoint at all.
  for (const RunPlan& plan : {plan_of(2'000, 10, 10'800, 60, 600), plan_of(2'000, 1, 300, 5, 0),
                              plan_of(2'000, 0.37, 300, 0.3, 100), plan_of(50, 1, 3'000, 60, 0),
                              plan_of(1'000, 1, 30, 500, 0), plan_of(2'000, 3, 1e5, 0, 100)}) {
    const int64_t best = optimal_interval_steps(plan);
    const int64_t scanned = scan_every_interval(plan);
    EXPECT_EQ(best, scanned) << plan.steps << " " << 1 / plan.failures_per_s;
    EXPECT_DOUBLE_EQ(expected_goodput(plan, best).expected_s,
                     expected_goodput(plan, scanned).expected_s);
  }
  int plans = 0;
  for (const int64_t steps : {2, 7, 100, 301}) {
    for (const double mttf_s : {3.0, 30.0, 300.0, 3'000.0, 1e5}) {
      for (const double block_s : {0.3, 5.0, 60.0, 500.0}) {
        const RunPlan plan = plan_of(steps, 1, mttf_s, block_s, 10);
        EXPECT_EQ(optimal_interval_steps(plan), scan_every_interval(plan))
            << steps << " " << mttf_s << " " << block_s;
        ++plans;
      }
    }
  }
  EXPECT_EQ(plans, 80);
}

}  // namespace
}  // namespace pipetwin
