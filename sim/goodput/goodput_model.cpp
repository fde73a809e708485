#include "sim/goodput/goodput_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace pipetwin {

namespace {

// expm1(x) / x - 1 = x/2 + x^2/6 + ...: the series below 0.1, where the direct form cancels.
double excess_over_linear(double x) {
  if (x >= 0.1) return std::expm1(x) / x - 1;
  double term = 1;  // x^k / (k + 1)!
  double sum = 0;
  for (int k = 1; k <= 12; ++k) {
    term *= x / (k + 1);
    sum += term;
  }
  return sum;
}

// Expected failures and lost time of one segment of `length_s`, restarts aside.
struct SegmentCost {
  double failures = 0;
  double lost_s = 0;
};

SegmentCost segment_cost(double length_s, double failures_per_s) {
  const double x = failures_per_s * length_s;
  // e^{lambda L} - 1 failures; (e^{lambda L} - 1) / lambda - L of the segment thrown away.
  return {std::expm1(x), length_s * excess_over_linear(x)};
}

}  // namespace

GoodputEstimate expected_goodput(const RunPlan& plan, int64_t interval_steps) {
  GoodputEstimate e;
  if (plan.steps <= 0) return e;
  const int64_t interval = std::clamp<int64_t>(interval_steps, 1, plan.steps);
  const int64_t segments = (plan.steps + interval - 1) / interval;
  const int64_t full = segments - 1;  // those followed by a checkpoint
  const double full_s = static_cast<double>(interval) * plan.step_s + plan.checkpoint_block_s;
  const double last_s = static_cast<double>(plan.steps - full * interval) * plan.step_s;
  // No full segment adds nothing, even when one of its length would overflow to infinity.
  const SegmentCost full_cost =
      full > 0 ? segment_cost(full_s, plan.failures_per_s) : SegmentCost{};
  const SegmentCost last_cost = segment_cost(last_s, plan.failures_per_s);
  const auto n = static_cast<double>(full);

  e.interval_steps = interval;
  e.checkpoints = full;
  e.compute_s = static_cast<double>(plan.steps) * plan.step_s;
  e.checkpoint_s = n * plan.checkpoint_block_s;
  e.failures = n * full_cost.failures + last_cost.failures;
  e.restart_s = e.failures * (plan.restart_s + plan.checkpoint_persist_s);
  e.lost_work_s = n * full_cost.lost_s + last_cost.lost_s;
  // The sum of the parts is the closed form (1/lambda + R)(e^{lambda L} - 1) per segment,
  // exact at lambda = 0 and without its cancellation at small lambda.
  e.expected_s = e.compute_s + e.checkpoint_s + e.restart_s + e.lost_work_s;
  e.ettr = e.expected_s > 0 ? e.compute_s / e.expected_s : 1;
  return e;
}

double optimal_interval_s(double failures_per_s, double checkpoint_block_s) {
  if (!(failures_per_s > 0)) return std::numeric_limits<double>::infinity();
  // 1 + e x = 1 - e^{-lambda C} for x = -exp(-lambda C - 1), computed without cancelling.
  const double q = -std::expm1(-failures_per_s * std::max(checkpoint_block_s, 0.0));
  return one_plus_lambert_w0_near_branch(q) / failures_per_s;
}

double young_interval_s(double failures_per_s, double checkpoint_block_s) {
  if (!(failures_per_s > 0)) return std::numeric_limits<double>::infinity();
  return std::sqrt(2 * checkpoint_block_s / failures_per_s);
}

int64_t optimal_interval_steps(const RunPlan& plan) {
  const int64_t steps = plan.steps;
  if (steps <= 1) return 1;
  if (!(plan.failures_per_s > 0) || !(plan.step_s > 0)) return steps;
  const double lambda = plan.failures_per_s;
  const double block_s = std::max(plan.checkpoint_block_s, 0.0);
  const double work_s = static_cast<double>(steps) * plan.step_s;
  const double scale = 1 / lambda + plan.restart_s + plan.checkpoint_persist_s;
  // A run of n segments is cheapest when the last segment, which writes no checkpoint, does
  // one checkpoint's time more work than the others: then all n take (work + (n-1) C) / n.
  // Without whole steps that is a lower bound on any interval that makes n segments, and it
  // is convex in n (n h(a/n + b), h convex), so the search walks out from its minimum and
  // stops on each side where the bound passes the best interval found.
  const auto bound = [&](int64_t n) {
    const auto segments = static_cast<double>(n);
    return segments * scale * std::expm1(lambda * (work_s + (segments - 1) * block_s) / segments);
  };
  const double tau = optimal_interval_s(lambda, block_s);
  const double from = tau > 0 ? (work_s - block_s) / tau : static_cast<double>(steps);
  int64_t start = std::llround(std::clamp(from, 1.0, static_cast<double>(steps)));
  while (start > 1 && bound(start - 1) < bound(start)) --start;
  while (start < steps && bound(start + 1) < bound(start)) ++start;
  if (!std::isfinite(bound(start))) return steps;  // no interval lets the run finish

  int64_t best = steps;
  double best_s = expected_goodput(plan, best).expected_s;
  // For n segments the cost is convex in the interval, lowest at (steps - C / step_s) / n;
  // the whole intervals that make exactly n segments lie in [ceil(steps / n),
  // floor((steps - 1) / (n - 1))].
  const double balanced_steps = static_cast<double>(steps) - block_s / plan.step_s;
  const auto try_segments = [&](int64_t n) {
    if (n < 2) return;
    const int64_t shortest = (steps + n - 1) / n;
    const int64_t longest = (steps - 1) / (n - 1);
    if (shortest > longest) return;
    const double balanced = balanced_steps / static_cast<double>(n);
    for (const double whole : {std::floor(balanced), std::ceil(balanced)}) {
      const int64_t interval =
          std::clamp(static_cast<int64_t>(std::clamp(whole, 1.0, static_cast<double>(steps))),
                     shortest, longest);
      const double s = expected_goodput(plan, interval).expected_s;
      if (s < best_s || (s == best_s && interval > best)) {
        best = interval;
        best_s = s;
      }
    }
  };
  // A relative margin keeps rounding in the bound from stopping a walk early.
  const auto beyond = [&](int64_t n) { return bound(n) > best_s * (1 + 1e-12); };
  try_segments(start);
  for (int64_t n = start - 1; n >= 2 && !beyond(n); --n) try_segments(n);
  for (int64_t n = start + 1; n <= steps && !beyond(n); ++n) try_segments(n);
  return best;
}

}  // namespace pipetwin
