// schedule.stage_replicas: PipeDream's hybrid plans, which replicate single stages.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/scenario/scenario_checker.h"
#include "sim/spec/resolved_scenario.h"

namespace pipetwin {

// The replicas of each stage; empty when the scenario replicates no stage. Throws InputError.
std::vector<int32_t> resolve_stage_replicas(const ScenarioChecker& check,
                                            const proto::Scenario& scenario,
                                            const TrainingSpec& training, int devices);

}  // namespace pipetwin
