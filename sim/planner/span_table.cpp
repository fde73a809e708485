#include "sim/planner/span_table.h"

#include <algorithm>

namespace pipetwin {

std::vector<int> SpanTable::layers(int i, int j) const {
  std::vector<int> result;
  states->states[j].before.for_each_minus(states->states[i].before, [&](size_t u) {
    const std::vector<int>& unit = graph->units[u].layers;
    result.insert(result.end(), unit.begin(), unit.end());
  });
  std::sort(result.begin(), result.end());
  return result;
}

SpanTable span_table(const PlannerProblem& p, const LayerGraph& graph,
                     const AntichainStates& states) {
  SpanTable t;
  t.states = &states;
  t.graph = &graph;
  t.classes = p.classes();
  const int s = t.size();
  const size_t units = graph.units.size();

  // Per unit first, so that a stage sums units rather than layers.
  std::vector<double> unit_seconds(units * t.classes, 0), unit_resident(units, 0),
      unit_gradients(units, 0), unit_stash(units, 0), unit_output(units, 0);
  for (size_t u = 0; u < units; ++u) {
    for (int layer : graph.units[u].layers) {
      for (int c = 0; c < t.classes; ++c) {
        unit_seconds[u * t.classes + c] += p.layer_seconds[c][layer];
      }
      unit_resident[u] += p.layer_resident_bytes[layer];
      unit_gradients[u] += p.layer_gradient_bytes[layer];
      unit_stash[u] += p.layer_stash_bytes[layer];
    }
  }
  // A unit's output: what its layers send to layers of other units.
  std::vector<int> unit_of(graph.layers, -1);
  for (size_t u = 0; u < units; ++u) {
    for (int layer : graph.units[u].layers) unit_of[layer] = static_cast<int>(u);
  }
  for (int layer = 0; layer < graph.layers; ++layer) {
    for (int consumer : p.model.layers[layer].consumers) {
      if (unit_of[consumer] != unit_of[layer]) {
        unit_output[unit_of[layer]] += p.layer_output_bytes[layer];
        break;
      }
    }
  }

  t.pair_id.assign(static_cast<size_t>(s) * s, -1);
  t.supersets.assign(s, BitSet(s));
  t.subsets.assign(s, BitSet(s));
  t.cut_bytes.assign(s, 0);
  for (int j = 0; j < s; ++j) {
    for (int u : states.states[j].augmented) t.cut_bytes[j] += unit_output[u];
    for (int i : states.subsets[j]) {
      const int id = static_cast<int>(t.resident.size());
      t.pair_id[static_cast<size_t>(i) * s + j] = id;
      t.supersets[i].set(j);
      t.subsets[j].set(i);
      t.seconds.resize(t.seconds.size() + t.classes, 0);
      double resident = 0, gradients = 0, stash = 0;
      states.states[j].before.for_each_minus(states.states[i].before, [&](size_t u) {
        for (int c = 0; c < t.classes; ++c) {
          t.seconds[static_cast<size_t>(id) * t.classes + c] += unit_seconds[u * t.classes + c];
        }
        resident += unit_resident[u];
        gradients += unit_gradients[u];
        stash += unit_stash[u];
      });
      t.resident.push_back(resident);
      t.gradients.push_back(gradients);
      t.stash.push_back(stash);
    }
  }
  return t;
}

}  // namespace pipetwin
