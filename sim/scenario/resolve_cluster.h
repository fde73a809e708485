// The cluster section: devices (with per-device overrides), links, fabric, interference,
// dispatch costs and an optional SimGrid platform file.
#pragma once

#include "sim/scenario/scenario_checker.h"
#include "sim/spec/resolved_scenario.h"

namespace pipetwin {

// Throws InputError naming the field at fault.
ClusterSpec resolve_cluster(const ScenarioChecker& check, const LoadedScenario& loaded);

}  // namespace pipetwin
