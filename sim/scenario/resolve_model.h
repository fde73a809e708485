// The model section: explicit layers, a PipeDream profile or a zoo model (a zoo model may
// carry its measured layers), and what turns its costs into the ones simulated.
#pragma once

#include "sim/scenario/scenario_checker.h"
#include "sim/spec/resolved_scenario.h"

namespace pipetwin {

// Throws InputError naming the field at fault.
ModelSpec resolve_model(const ScenarioChecker& check, const LoadedScenario& loaded);

// Whether model.zoo.memory_efficiency times the zoo's memory-bound kernels: a zoo model with
// a memory_efficiency and without measured layers (whose costs hold those kernels already).
bool counts_memory_bound_kernels(const proto::Scenario& s);

// model.zoo.memory_efficiency: times the memory-bound kernels of setup.model and its
// optimizer step (sim/model/training_memory.h) from the GPU's memory bandwidth.
void add_memory_bound_kernels(const ScenarioChecker& check, const proto::Scenario& s,
                              ResolvedScenario& setup);

// training.recompute: rebuilds activations in the backward of setup.model's layers.
// GEMM efficiency by shape (sim/model/shape_efficiency.h): a zoo model without an explicit
// model.zoo.efficiency on a cluster whose GPU has a GEMM curve, at the scenario's microbatch
// size and parallelism. Before expert parallelism and recomputation, which copy its costs.
void add_shape_efficiency(const proto::Scenario& s, ResolvedScenario& setup);

void add_activation_recompute(const ScenarioChecker& check, ResolvedScenario& setup);

}  // namespace pipetwin
