// Contiguous layer placement that minimises the slowest stage.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace pipetwin {

// Splits `layer_times` (in model order) into `parts` non-empty contiguous groups so
// that the largest group sum is as small as possible; returns the layer count of each
// group. Exact: dynamic programming over (groups, prefix), O(parts * L^2).
// Among optimal splits it prefers the one found first scanning earlier cuts, so the
// result is deterministic. Requires 1 <= parts <= layer_times.size().
// With `part_speeds` (one per group, empty: all 1), group g's time is its sum over
// part_speeds[g]: stages on slower devices get fewer layers.
std::vector<int32_t> balanced_partition(const std::vector<double>& layer_times, int32_t parts,
                                        std::span<const double> part_speeds = {});

// The largest group sum of a split given as layer counts.
double bottleneck_of(const std::vector<double>& layer_times, const std::vector<int32_t>& counts);

}  // namespace pipetwin
