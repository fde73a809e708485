// The points of a sweep: the cartesian product of its --vary axes.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "sim/sweep/vary_axis.h"

namespace pipetwin {

// One point: a value for each axis, in the order the axes were given.
struct SweepPoint {
  std::vector<std::pair<std::string, std::string>> settings;  // (path, value)
};

// Every combination, the first axis varying slowest (as nested loops written in the order
// of the --vary options), so the order is predictable and the same on every run.
// Throws InputError when two axes vary the same path, or when an axis varies a path that
// a fixed --set also writes (the --set would silently never apply).
std::vector<SweepPoint> cartesian_product(const std::vector<VaryAxis>& axes,
                                          const std::vector<std::string>& fixed_overrides = {});

// "training.microbatches=8, schedule.kind=GPIPE": how errors and logs name a point.
std::string point_name(const SweepPoint& point);

// The --set list that produces the point: the fixed ones first, then the point's.
std::vector<std::string> point_overrides(const std::vector<std::string>& fixed_overrides,
                                         const SweepPoint& point);

}  // namespace pipetwin
