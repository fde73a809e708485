// The freezing half of the design's loop: fed each interval's per-layer gradient norms,
// it says which prefix is frozen from the next iteration on. The simulated run feeds it
// synthetic or logged norms; the real run feeds it the norms its ranks just measured.
// Either way the decision is this one piece of code.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/spec/resolved_scenario.h"

namespace pipetwin {

class FreezeController {
 public:
  FreezeController(const FreezeSpec& spec, int32_t layers, int32_t iterations);

  // Iterations per interval: the rule runs after every one.
  int32_t interval() const { return spec_.interval_iterations; }

  // The norms of interval k (k = 0, 1, ...: iterations [k I, (k + 1) I)), accumulated per
  // layer. Returns the frozen prefix from iteration (k + 1) I on. The first interval only
  // sets the reference; one layer always keeps training; nothing changes once the run
  // has no iteration left after the interval.
  int32_t observe(const std::vector<double>& interval_norms);

  int32_t frozen() const { return frozen_; }

 private:
  FreezeSpec spec_;
  int32_t layers_ = 0;
  int32_t iterations_ = 0;
  int32_t observed_ = 0;  // intervals seen
  int32_t frozen_ = 0;
  std::vector<double> previous_;
};

}  // namespace pipetwin
