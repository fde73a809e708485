// The freeze section (FreezePipe): when layers freeze (fixed points, a measured log or
// synthetic gradients), the freezing rule, repartitioning and the cache of frozen outputs.
#pragma once

#include <cstdint>

#include "sim/scenario/scenario_checker.h"
#include "sim/spec/resolved_scenario.h"

namespace pipetwin {

// Disabled when the scenario has no freeze block. Throws InputError.
FreezeSpec resolve_freeze(const ScenarioChecker& check, const LoadedScenario& loaded,
                          int32_t layers, int32_t iterations);

}  // namespace pipetwin
