// Weight versions of a Program's stages, read off each stage's compute lane: a forward
// uses the weights of the updates before it; its gradient is applied by the next update
// after its backward. Synchronous schedules (a flush before every update) have one
// version and no staleness; asynchronous ones stash the versions that in-flight
// microbatches still need (PipeDream's weight stashing).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/program/program.h"

namespace pipetwin {

struct WeightVersions {
  // Per stage: the most versions alive at once (the current one and those stashed).
  std::vector<int32_t> alive;
  // Over every backward: updates between the forward's version and the update that
  // applies its gradient ("versions behind").
  int32_t max_staleness = 0;
  double mean_staleness = 0;
  // Per instruction: a FWD's weight version (the updates of its stage before it), else -1.
  std::vector<int32_t> forward_version;
};

WeightVersions weight_versions(const Program& program);

}  // namespace pipetwin
