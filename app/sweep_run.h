// One sweep's grid, run point by point each in its own child process (SimGrid allows one
// engine per process): what `pipetwin sweep` prints and the Python module returns.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/driver/resource_limits.h"
#include "sim/sweep/shard.h"
#include "sim/sweep/sweep_row.h"

namespace pipetwin {

struct SweepRequest {
  std::string scenario;                // a path, builtin:NAME, or empty for the quickstart
  std::vector<std::string> vary;       // PATH=V1,V2,...
  std::vector<std::string> overrides;  // PATH=VALUE at every point
  std::string engine = "analytic";
  int jobs = 0;  // points at once; 0: one per available CPU
  bool allow_oom = false;
  int64_t max_points = 100000;
  Shard shard;  // the slice of the grid to run (default: all of it)
  ResourceLimits limits;
  bool progress = true;  // draw a progress bar on stderr when it is a terminal
};

struct SweepOutcome {
  std::vector<std::string> paths;  // the varied fields, in --vary order
  std::vector<SweepRow> rows;      // fastest first
  int64_t failed = 0;              // rows whose point failed (their result says why)
};

// Loads and validates every point first: bad input (InputError naming the point) stops
// the sweep before any point runs.
SweepOutcome run_sweep_grid(const SweepRequest& request);

}  // namespace pipetwin
