// The cost model of the PipeDream planner, one function per term, and the cost of a whole
// plan. The DP (pipedream_planner.h) minimises exactly this bottleneck on one bandwidth
// level; tests check it against brute force through plan_cost().
//
// Per microbatch in the steady state of a pipeline, with M microbatches per iteration:
//   stage time  = max over its devices of the stage's fwd+bwd seconds / replicas
//               + all-reduce of its gradients / M   (once per iteration, amortised; the
//                 two-level all-reduce of sim/network/two_level_allreduce.h over the
//                 replicas on each node and the nodes they span)
//   cut time    = latency + bytes crossing the cut / (bandwidth * sender replicas)
//                 (striped_transfer_seconds, sim/network/point_to_point.h)
//                 (links are full duplex: activations go one way, gradients the other;
//                 the intra-node link when both stages sit on the same nodes)
//   bottleneck  = max over stages and cuts
//   memory      = weights + gradients + optimizer state
//               + stash of one microbatch * min(M, ceil(devices from this stage to the
//                 end / replicas))       (1F1B's min(K - s, M); PipeDream's NOAM with
//                                         replication)
#pragma once

#include <vector>

#include "sim/planner/planner_problem.h"
#include "sim/spec/cluster_spec.h"

namespace pipetwin {

int in_flight_microbatches(int devices_to_end, int replicas, int microbatches);

struct StagePlacement {
  std::vector<int> layers;   // model layer indices
  std::vector<int> devices;  // device ids; their count is the stage's replicas
};

struct PlannedStageCost {
  double compute_s = 0;    // fwd + bwd per microbatch, divided among the replicas
  double allreduce_s = 0;  // per microbatch (the iteration's all-reduce / M)
  double time_s = 0;       // compute_s + allreduce_s
  double cut_s = 0;        // to the next stage; 0 for the last
  double memory_bytes = 0;
  double memory_limit_bytes = 0;  // the smallest memory among its devices
  int in_flight = 0;
};

struct PlanCost {
  std::vector<PlannedStageCost> stages;
  double bottleneck_s = 0;
  bool fits = true;  // every stage within its devices' memory
};

// Stages in pipeline order; every layer in exactly one stage, consumers never earlier.
PlanCost plan_cost(const PlannerProblem& problem, const std::vector<StagePlacement>& stages);

}  // namespace pipetwin
