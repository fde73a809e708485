#include "sim/goodput/goodput_monte_carlo.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace pipetwin {

namespace {

// `count` identical segments of `length_s`: their failures and the time those failures lose.
class SegmentSampler {
 public:
  SegmentSampler(int64_t count, double length_s, double failures_per_s)
      : count_(count), length_s_(length_s), lambda_(failures_per_s) {
    const double success = std::exp(-lambda_ * length_s_);
    fails_ = count_ > 0 && lambda_ > 0 && success < 1;
    never_ = fails_ && !(success > 0);
    if (fails_ && !never_) {
      failures_ = std::negative_binomial_distribution<int64_t>(count_, success);
      failure_probability_ = -std::expm1(-lambda_ * length_s_);
    }
  }

  // Adds the segments' time, restarts aside, and their failures.
  void sample(std::mt19937_64& rng, double& time_s, int64_t& failures) {
    time_s += static_cast<double>(count_) * length_s_;
    if (!fails_) return;
    if (never_) {
      time_s = std::numeric_limits<double>::infinity();
      return;
    }
    const int64_t n = failures_(rng);
    failures += n;
    // Inverse CDF of the exponential truncated to [0, L): -log(1 - u (1 - e^{-lambda L})) /
    // lambda, each u a 53-bit uniform on [0, 1).
    double lost = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;
      lost -= std::log1p(-u * failure_probability_);
    }
    time_s += lost / lambda_;
  }

 private:
  int64_t count_;
  double length_s_;
  double lambda_;
  bool fails_ = false;
  bool never_ = false;
  std::negative_binomial_distribution<int64_t> failures_;
  double failure_probability_ = 0;
};

// Linear interpolation between order statistics (the "type 7" of Hyndman and Fan).
double percentile(const std::vector<double>& sorted, double fraction) {
  const double rank = fraction * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<size_t>(rank);
  if (below + 1 >= sorted.size()) return sorted.back();
  if (sorted[below] == sorted[below + 1]) return sorted[below];  // also +infinity
  return sorted[below] + (rank - static_cast<double>(below)) * (sorted[below + 1] - sorted[below]);
}

}  // namespace

MonteCarloSummary monte_carlo_goodput(const RunPlan& plan, int64_t interval_steps, int32_t runs,
                                      uint64_t seed) {
  MonteCarloSummary summary;
  summary.seed = seed;
  if (runs <= 0) return summary;
  summary.runs = runs;
  std::vector<double> times(static_cast<size_t>(runs), 0.0);
  if (plan.steps > 0) {
    const int64_t interval = std::clamp<int64_t>(interval_steps, 1, plan.steps);
    const int64_t full = (plan.steps + interval - 1) / interval - 1;
    const double last_s = static_cast<double>(plan.steps - full * interval) * plan.step_s;
    SegmentSampler full_segments(
        full, static_cast<double>(interval) * plan.step_s + plan.checkpoint_block_s,
        plan.failures_per_s);
    SegmentSampler last_segment(1, last_s, plan.failures_per_s);
    const double restart_s = plan.restart_s + plan.checkpoint_persist_s;
    std::mt19937_64 rng(seed);
    int64_t all_failures = 0;
    for (double& time_s : times) {
      int64_t failures = 0;
      full_segments.sample(rng, time_s, failures);
      last_segment.sample(rng, time_s, failures);
      time_s += static_cast<double>(failures) * restart_s;
      all_failures += failures;
    }
    summary.mean_failures = static_cast<double>(all_failures) / runs;
  }
  double sum = 0;
  for (const double time_s : times) sum += time_s;
  summary.mean_s = sum / runs;
  std::sort(times.begin(), times.end());
  summary.p5_s = percentile(times, 0.05);
  summary.p50_s = percentile(times, 0.50);
  summary.p95_s = percentile(times, 0.95);
  return summary;
}

}  // namespace pipetwin
