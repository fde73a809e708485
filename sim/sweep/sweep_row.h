// One line of a sweep's output: a point and what running it gave.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/sweep/point_result.h"
#include "sim/sweep/sweep_grid.h"

namespace pipetwin {

struct SweepRow {
  SweepPoint point;
  PointResult result;
  int64_t index = 0;        // the point's place in grid order, whichever shard ran it
  int64_t grid_points = 0;  // of the whole grid, so that merged shards can be checked
};

// Fastest first, which is the question a sweep asks; failed points (no time) last. Ties
// keep the grid order, so the output is the same whatever order the points finished in.
void sort_by_iteration_time(std::vector<SweepRow>& rows);

}  // namespace pipetwin
