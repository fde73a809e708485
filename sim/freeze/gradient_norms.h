// Synthetic per-layer gradient statistics for what-if FreezePipe runs, interval by
// interval (a real run's come from a freeze log, sim/scenario/freeze_log.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/spec/freeze_spec.h"

namespace pipetwin {

// Layer l at iteration t has norm (floor + (1 - floor) exp(-t / tau_l)) (1 + noise N(0, 1)),
// summed over each interval of `interval` iterations; `intervals` of them. Deterministic
// for a seed.
IntervalNorms synthetic_interval_norms(const SyntheticGradientModel& model, int32_t layers,
                                       int32_t interval, int32_t intervals);

}  // namespace pipetwin
