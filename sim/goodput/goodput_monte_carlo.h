// Samples the run of goodput_model.h (same segments, Poisson failures, restarts and effective
// restart for asynchronous checkpoints) to give the spread the closed form's expectation
// hides. It draws per segment kind, not per failure event: with identical segments of length
// L, the failures before N successes are negative-binomial with success probability
// e^{-lambda L}, and each failure loses a time drawn from the exponential truncated to [0, L).
#pragma once

#include <cstdint>

#include "sim/goodput/goodput_model.h"

namespace pipetwin {

struct MonteCarloSummary {
  int32_t runs = 0;
  uint64_t seed = 0;
  double mean_s = 0;
  double p5_s = 0, p50_s = 0, p95_s = 0;  // percentiles of the wall clock, interpolated
  double mean_failures = 0;
};

// `runs` runs of `plan` checkpointed every `interval_steps` steps (clamped as in
// expected_goodput), from std::mt19937_64(seed): the same numbers for the same seed on the
// same standard library. A segment that could never finish (e^{-lambda L} rounds to 0) makes
// the wall clock +infinity.
MonteCarloSummary monte_carlo_goodput(const RunPlan& plan, int64_t interval_steps, int32_t runs,
                                      uint64_t seed);

}  // namespace pipetwin
