// The training section: batch, microbatches, precision, data and tensor parallelism.
#pragma once

#include "sim/scenario/scenario_checker.h"
#include "sim/spec/resolved_scenario.h"

namespace pipetwin {

// Throws InputError naming the field at fault.
TrainingSpec resolve_training(const ScenarioChecker& check, const proto::Scenario& s);

// Tensor parallelism splits layers, heads and nodes: checked once the model, the cluster,
// the schedule and freezing are resolved into `setup`.
void check_tensor_parallel(const ScenarioChecker& check, const proto::Scenario& s,
                           const ResolvedScenario& setup);

// Context parallelism (training.context_parallel) against the model and the schedule.
void check_context_parallel(const ScenarioChecker& check, const ResolvedScenario& setup);
// ZeRO: checked against the schedule, offload and freezing.
void check_zero_stage(const ScenarioChecker& check, const ResolvedScenario& setup);
// training.grad_reduce_after_flush against the gradient buckets, ZeRO and the schedule.
void check_reduce_after_flush(const ScenarioChecker& check, const ResolvedScenario& setup);

// Expert parallelism: checked against the model's experts and the schedule, then applied to
// the model's layers (sim/model/expert_parallel.h), before recomputation.
void add_expert_parallel(const ScenarioChecker& check, const proto::Scenario& s,
                         ResolvedScenario& setup);

// training.rank_order TP_CP_EP_DP_PP: each used device's node and place in it as Megatron-Core
// orders its ranks (the devices keep their numbers).
void place_ranks(const ScenarioChecker& check, const proto::Scenario& s, ResolvedScenario& setup);

}  // namespace pipetwin
