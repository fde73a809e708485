#include "sim/freeze/freeze_controller.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "sim/freeze/auto_freeze.h"

namespace pipetwin {

FreezeController::FreezeController(const FreezeSpec& spec, int32_t layers, int32_t iterations)
    : spec_(spec), layers_(layers), iterations_(iterations) {}

int32_t FreezeController::observe(const std::vector<double>& interval_norms) {
  if (static_cast<int32_t>(interval_norms.size()) != layers_) {
    throw std::invalid_argument("gradient norms of " + std::to_string(interval_norms.size()) +
                                " layers for a model of " + std::to_string(layers_));
  }
  const int32_t k = observed_++;
  // In 64 bits: intervals near the largest int32 must not overflow.
  const int64_t next = static_cast<int64_t>(k + 1) * spec_.interval_iterations;
  if (k > 0 && next < iterations_) {
    frozen_ = std::max(
        frozen_,
        std::min(apply_auto_freeze(previous_, interval_norms, frozen_, spec_.rule), layers_ - 1));
  }
  previous_ = interval_norms;
  return frozen_;
}

}  // namespace pipetwin
