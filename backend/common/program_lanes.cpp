#include "backend/common/program_lanes.h"

namespace pipetwin {

LaneSchedule lane_schedule(const Program& program, int32_t rank) {
  LaneSchedule schedule;
  schedule.program_size = program.size();
  schedule.lanes.resize(kLaneCount);
  schedule.waits.resize(program.size());
  for (int lane = 0; lane < kLaneCount; ++lane) {
    const int l = rank * kLaneCount + lane;
    for (int32_t i = program.lane_begin[l]; i < program.lane_begin[l + 1]; ++i) {
      schedule.lanes[lane].push_back(i);
      for (int32_t d : program.deps_of(i)) {
        if (program.instructions[d].lane() != program.instructions[i].lane()) {
          schedule.waits[i].push_back(d);
        }
      }
    }
  }
  return schedule;
}

}  // namespace pipetwin
