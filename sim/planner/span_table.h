// What every possible stage costs, computed once: for each pair of states i, j with
// before(i) a strict subset of before(j), the stage's seconds on each device class and
// its bytes; for each state, the bytes crossing its cut.
#pragma once

#include <vector>

#include "sim/planner/antichain_states.h"
#include "sim/planner/layer_graph.h"
#include "sim/planner/planner_problem.h"

namespace pipetwin {

struct SpanTable {
  const AntichainStates* states = nullptr;
  const LayerGraph* graph = nullptr;
  int classes = 1;
  std::vector<int> pair_id;       // [i * S + j], -1 where (i, j) is no stage
  std::vector<double> seconds;    // [pair * classes + class]
  std::vector<double> resident;   // [pair]
  std::vector<double> gradients;  // [pair]
  std::vector<double> stash;      // [pair]
  std::vector<double> cut_bytes;  // [state]
  std::vector<BitSet> supersets;  // [i]: the states j that (i, j) is a stage for
  std::vector<BitSet> subsets;    // [j]: the states i that (i, j) is a stage for

  int size() const { return static_cast<int>(states->states.size()); }
  int pair(int i, int j) const { return pair_id[static_cast<size_t>(i) * size() + j]; }
  // The model layers of stage (i, j), increasing.
  std::vector<int> layers(int i, int j) const;
};

SpanTable span_table(const PlannerProblem& problem, const LayerGraph& graph,
                     const AntichainStates& states);

}  // namespace pipetwin
