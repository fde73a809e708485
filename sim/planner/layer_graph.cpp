#include "sim/planner/layer_graph.h"

#include <algorithm>

namespace pipetwin {
namespace {

bool is_free(const LayerCost& cost) {
  return cost.seconds_per_sample == 0 && cost.flops_per_sample == 0 && cost.fixed_s == 0 &&
         cost.fixed_flops == 0 && cost.points.empty();
}

bool is_free(const ModelLayer& layer) {
  return is_free(layer.fwd) && is_free(layer.bwd) && layer.parameter_bytes == 0;
}

}  // namespace

LayerGraph layer_graph_of(const ModelSpec& model, bool glue) {
  const int n = static_cast<int>(model.layers.size());
  std::vector<std::vector<int>> producers(n);
  for (int i = 0; i < n; ++i) {
    for (int c : model.layers[i].consumers) producers[c].push_back(i);
  }
  // glued_to[i]: the layer i shares its stage with (itself when not glued). Decided in
  // layer order, always onto a layer that is not glued elsewhere, so chains end.
  std::vector<int> glued_to(n);
  for (int i = 0; i < n; ++i) glued_to[i] = i;
  const auto root = [&](int i) {
    while (glued_to[i] != i) i = glued_to[i];
    return i;
  };
  for (int i = 0; i < n && glue; ++i) {
    if (!is_free(model.layers[i])) continue;
    const std::vector<int>& out = model.layers[i].consumers;
    int target = -1;
    if (out.empty() && producers[i].size() == 1) target = producers[i][0];
    if (producers[i].empty() && out.size() == 1) target = out[0];
    if (target < 0) continue;
    target = root(target);
    if (target != i) glued_to[i] = target;
  }
  LayerGraph graph;
  graph.layers = n;
  std::vector<int> unit_of(n, -1);
  for (int i = 0; i < n; ++i) {
    if (root(i) != i) continue;
    unit_of[i] = static_cast<int>(graph.units.size());
    graph.units.emplace_back();
  }
  for (int i = 0; i < n; ++i) {
    unit_of[i] = unit_of[root(i)];
    graph.units[unit_of[i]].layers.push_back(i);
  }
  for (int i = 0; i < n; ++i) {
    for (int c : model.layers[i].consumers) {
      const int from = unit_of[i], to = unit_of[c];
      if (from != to) graph.units[from].consumers.push_back(to);
    }
  }
  for (PlannerUnit& unit : graph.units) {
    std::sort(unit.consumers.begin(), unit.consumers.end());
    unit.consumers.erase(std::unique(unit.consumers.begin(), unit.consumers.end()),
                         unit.consumers.end());
  }
  return graph;
}

}  // namespace pipetwin
