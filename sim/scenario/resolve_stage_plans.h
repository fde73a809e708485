// UMPIPE's schedule.stage_plans: each stage's microbatch sizes, forward and backward.
#pragma once

#include "sim/scenario/scenario_checker.h"
#include "sim/spec/resolved_scenario.h"

namespace pipetwin {

// One plan per stage whose sizes sum to a replica's batch. Throws InputError.
UnequalPlan resolve_stage_plans(const ScenarioChecker& check, const proto::Schedule& p,
                                const TrainingSpec& training);

}  // namespace pipetwin
