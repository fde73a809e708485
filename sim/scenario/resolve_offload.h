// schedule.offload: which stages copy activations or weight stashes to host memory.
#pragma once

#include <cstdint>

#include "sim/scenario/scenario_checker.h"
#include "sim/spec/resolved_scenario.h"

namespace pipetwin {

// Disabled when the schedule has no offload block; `chunks` is the pipeline's stage count.
// Throws InputError.
OffloadSpec resolve_offload(const ScenarioChecker& check, const proto::Schedule& p, int32_t chunks,
                            const ClusterSpec& cluster);

}  // namespace pipetwin
