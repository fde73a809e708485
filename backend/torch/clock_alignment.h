// Putting every rank's timestamps on one clock. NTP-style: rank 0 and each other rank
// exchange timestamps a few times, and the exchange with the shortest round trip gives
// the offset (rank 0's clock minus this rank's). Then rank 0 broadcasts its clock once,
// which also lines the ranks up before they start.
#pragma once

#include "backend/torch/real_run.h"
#include "backend/torch/torch_pch.h"

namespace pipetwin {

double steady_now_s();

struct ClockAlignment {
  double offset_s = 0;       // rank 0's clock minus this rank's
  double rank0_start_s = 0;  // rank 0's start, on this rank's clock
};

// Every rank calls it. Uses point-to-point tags [first_tag, first_tag + 16 * world_size).
ClockAlignment align_clocks(c10d::ProcessGroupGloo& pg, const RankEnvironment& env, int first_tag);

}  // namespace pipetwin
