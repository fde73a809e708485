// The schedule section: the kind, stages and virtual stages, what each kind requires of the
// training section, stage plans, stage replicas and the partition of layers.
#pragma once

#include "sim/scenario/scenario_checker.h"
#include "sim/spec/resolved_scenario.h"

namespace pipetwin {

// `layers` and `devices` are the resolved model's and cluster's. Throws InputError.
ScheduleSpec resolve_schedule(const ScenarioChecker& check, const proto::Scenario& s, int layers,
                              int devices, const TrainingSpec& training);

}  // namespace pipetwin
