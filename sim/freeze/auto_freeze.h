// AutoFreeze's rule (PipeTransformer, Wang et al. 2021), which FreezePipe uses: after
// each interval, take the L1 norm G_l of each active layer's gradient accumulated over the
// interval and r_l = |G_l,prev - G_l| / G_l,prev. The threshold is a percentile of r over
// the active layers; the frozen prefix grows up to (not including) the first active layer
// with r_l >= threshold, by at most max(1, floor(max_fraction_per_step * L)) layers.
// Frozen layers always form a prefix. Pure C++: the simulated and the real run share it.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/spec/freeze_spec.h"

namespace pipetwin {

// The new frozen prefix length after an interval, from the previous and current
// per-layer accumulated norms of all L layers (entries below `frozen` are ignored).
int32_t apply_auto_freeze(const std::vector<double>& previous, const std::vector<double>& current,
                          int32_t frozen, const FreezeRule& rule);

// Percentile p (0..100) with linear interpolation between order statistics (numpy's
// default). `values` must not be empty.
double percentile_of(std::vector<double> values, double p);

}  // namespace pipetwin
