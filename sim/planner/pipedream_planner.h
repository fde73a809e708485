// PipeDream's partitioner (and APapo's matching of stages to heterogeneous devices): the
// antichain DP over the layer DAG with per-stage replication, memory, two bandwidth levels
// and the activation traffic at each cut. docs/apapo.md explains the model.
#pragma once

#include <vector>

#include "sim/planner/plan_cost.h"
#include "sim/planner/planner_problem.h"

namespace pipetwin {

struct PlannedStage {
  std::vector<int> layers;   // model layer indices, increasing
  std::vector<int> devices;  // device ids; replicas = devices.size()
  PlannedStageCost cost;
};

struct PipedreamPlan {
  std::vector<PlannedStage> stages;
  double bottleneck_s = 0;  // plan_cost() of the plan
  double objective_s = 0;   // what the DP minimised (equal on one level, or straight)
  int states = 0;           // antichain states
  int levels = 1;           // 2: inside a node, then across nodes
  int devices_used = 0;
  bool contiguous = true;  // every stage a contiguous range of the model's layer order

  std::vector<int> partition() const;  // layers per stage (meaningful when contiguous)
};

struct PipedreamOptions {
  // Only cut where schedule.partition can (between prefixes of the layer order).
  bool chain_only = false;
};

// Homogeneous clusters on several nodes are solved level by level as PipeDream does:
// first every span of states on the GPUs of one node (intra-node links), then the model
// over nodes, each span's time being the best pipeline inside a node. Heterogeneous
// clusters are solved on one level over device classes, across nodes with the inter-node
// link (conservative). Throws InputError when no plan fits in memory.
PipedreamPlan plan_pipedream(const PlannerProblem& problem, const PipedreamOptions& options = {});

}  // namespace pipetwin
