// What the PipeDream planner needs from a scenario, at the plan's microbatch size:
// per-layer times on each kind of device, bytes, the devices and the two link levels.
#pragma once

#include <string>
#include <vector>

#include "sim/spec/cluster_spec.h"
#include "sim/spec/model_spec.h"
#include "sim/spec/resolved_scenario.h"

namespace pipetwin {

struct PlannerProblem {
  ModelSpec model;
  // Devices of equal speed and memory form a class; a homogeneous cluster has one.
  std::vector<std::vector<double>> layer_seconds;  // [class][layer]: fwd + bwd, one microbatch
  std::vector<double> class_memory_bytes;
  std::vector<int> device_class;  // by device id
  std::vector<int> device_node;   // by device id
  int nodes = 1;
  int gpus_per_node = 1;
  LinkSpec intra_node;
  LinkSpec inter_node;
  std::vector<double> layer_resident_bytes;  // weights + gradients + optimizer state
  std::vector<double> layer_gradient_bytes;  // what an all-reduce moves
  std::vector<double> layer_stash_bytes;     // kept for the backward, one microbatch
  std::vector<double> layer_output_bytes;    // sent to consumers, one microbatch
  double microbatch_samples = 1;
  int microbatches = 1;   // per iteration: all-reduces are amortised over them
  bool straight = false;  // one device per stage (no replication)
  // Named in the error for a memory limit nothing fits in ("file:line: cluster...").
  std::string memory_source = "device memory";

  int classes() const { return static_cast<int>(class_memory_bytes.size()); }
  int devices() const { return static_cast<int>(device_class.size()); }
  bool heterogeneous() const { return classes() > 1; }
};

// The scenario's model and cluster; microbatches of global_batch / microbatches samples
// (the planner decides replication itself, so training.data_parallel is not applied).
PlannerProblem planner_problem(const ResolvedScenario& setup);

}  // namespace pipetwin
