// A rank's part of a Program as the lane runner takes it (lane_runner.h).
#pragma once

#include "backend/common/lane_runner.h"
#include "sim/program/program.h"

namespace pipetwin {

// Lane l of `rank` in the Program's order; each instruction waits for its dependencies on
// the rank's other lanes (a lane's own order already holds the rest).
LaneSchedule lane_schedule(const Program& program, int32_t rank);

}  // namespace pipetwin
