// `pipetwin plan SCENARIO --search pipedream --write-plan FILE`: the scenario with the plan
// as its schedule, for `pipetwin simulate` (docs/apapo.md).
#pragma once

#include "app/plan_pipedream.h"
#include "sim/planner/pipedream_planner.h"
#include "sim/scenario/loaded_scenario.h"

namespace pipetwin {

// Writes `plan` to args.write_plan: stages, partition, and for a plan that replicates
// stages, schedule.stage_replicas with PipeDream's asynchronous schedule. A plan that cuts
// the DAG between branches cannot be a schedule.partition, so the best contiguous plan of
// `problem` takes its place; stderr says so, with both bottlenecks.
void write_pipedream_plan(const PipedreamPlanArgs& args, const LoadedScenario& loaded,
                          PlannerProblem problem, const PipedreamPlan& plan);

}  // namespace pipetwin
