// The graph the PipeDream planner cuts: the model's layer DAG, with free dangling layers
// glued to their only neighbour so that they do not multiply the antichain states.
#pragma once

#include <vector>

#include "sim/spec/model_spec.h"

namespace pipetwin {

// Layers that always share a stage. Units are in topological order and their edges go
// from a lower to a higher index.
struct PlannerUnit {
  std::vector<int> layers;     // model layer indices, increasing
  std::vector<int> consumers;  // unit indices, increasing
};

struct LayerGraph {
  std::vector<PlannerUnit> units;
  int layers = 0;
};

// A layer is free when it costs nothing (no time, no weights). A free sink with one
// producer is glued to that producer, and a free source with one consumer to that
// consumer: GNMT's unused LSTM state outputs (__getitem__) and its Input/hidden sources
// would otherwise multiply the states ~12x. PipeDream's optimizer drops such nodes
// outright; gluing keeps their bytes. Separating them from their neighbour never lowers
// compute or weights, and only adds traffic at a cut. But a glued source far from its
// consumer forbids every chain cut between the two, so chain-only plans (`glue` false)
// keep one unit per layer: they have only L + 1 states anyway.
LayerGraph layer_graph_of(const ModelSpec& model, bool glue = true);

}  // namespace pipetwin
