// A run plan from its steps, step time, mean time to failure, checkpoint and restart times,
// for the goodput tests.
#pragma once

#include <cstdint>

#include "sim/goodput/goodput_model.h"

namespace pipetwin::testing {

inline RunPlan plan_of(int64_t steps, double step_s, double mttf_s, double block_s,
                       double restart_s) {
  RunPlan plan;
  plan.steps = steps;
  plan.step_s = step_s;
  plan.failures_per_s = 1 / mttf_s;
  plan.checkpoint_block_s = block_s;
  plan.restart_s = restart_s;
  return plan;
}

}  // namespace pipetwin::testing
