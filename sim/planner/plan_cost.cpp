#include "sim/planner/plan_cost.h"

#include <algorithm>
#include <set>

#include "sim/network/point_to_point.h"
#include "sim/network/two_level_allreduce.h"

namespace pipetwin {

int in_flight_microbatches(int devices_to_end, int replicas, int microbatches) {
  return std::min(microbatches, (devices_to_end + replicas - 1) / replicas);
}

PlanCost plan_cost(const PlannerProblem& p, const std::vector<StagePlacement>& stages) {
  const int layers = static_cast<int>(p.model.layers.size());
  std::vector<int> stage_of(layers, -1);
  for (size_t s = 0; s < stages.size(); ++s) {
    for (int layer : stages[s].layers) stage_of[layer] = static_cast<int>(s);
  }
  int devices_to_end = 0;
  for (const StagePlacement& stage : stages)
    devices_to_end += static_cast<int>(stage.devices.size());

  PlanCost cost;
  for (size_t s = 0; s < stages.size(); ++s) {
    const StagePlacement& stage = stages[s];
    const int replicas = static_cast<int>(stage.devices.size());
    PlannedStageCost c;
    std::set<int> nodes;
    c.memory_limit_bytes = p.class_memory_bytes[p.device_class[stage.devices[0]]];
    double resident = 0, gradients = 0, stash = 0;
    for (int layer : stage.layers) {
      resident += p.layer_resident_bytes[layer];
      gradients += p.layer_gradient_bytes[layer];
      stash += p.layer_stash_bytes[layer];
    }
    for (int d : stage.devices) {
      double seconds = 0;
      for (int layer : stage.layers) seconds += p.layer_seconds[p.device_class[d]][layer];
      c.compute_s = std::max(c.compute_s, seconds / replicas);
      c.memory_limit_bytes =
          std::min(c.memory_limit_bytes, p.class_memory_bytes[p.device_class[d]]);
      nodes.insert(p.device_node[d]);
    }
    const int spanned = static_cast<int>(nodes.size());
    c.allreduce_s = two_level_allreduce_seconds(gradients, (replicas + spanned - 1) / spanned,
                                                spanned, p.intra_node, p.inter_node) /
                    p.microbatches;
    c.time_s = c.compute_s + c.allreduce_s;
    c.in_flight = in_flight_microbatches(devices_to_end, replicas, p.microbatches);
    devices_to_end -= replicas;
    c.memory_bytes = resident + stash * c.in_flight;
    if (c.memory_bytes > c.memory_limit_bytes) cost.fits = false;
    if (s + 1 < stages.size()) {
      // Outputs of layers up to this stage read by a layer after it.
      double bytes = 0;
      for (int layer = 0; layer < layers; ++layer) {
        if (stage_of[layer] > static_cast<int>(s)) continue;
        for (int consumer : p.model.layers[layer].consumers) {
          if (stage_of[consumer] > static_cast<int>(s)) {
            bytes += p.layer_output_bytes[layer];
            break;
          }
        }
      }
      // Stages on the same nodes talk inside each node (copies of a span on several
      // nodes each feed their own next stage); otherwise the traffic leaves the node.
      std::set<int> next_nodes;
      for (int d : stages[s + 1].devices) next_nodes.insert(p.device_node[d]);
      c.cut_s = striped_transfer_seconds(bytes, replicas,
                                         nodes == next_nodes ? p.intra_node : p.inter_node);
    }
    cost.bottleneck_s = std::max({cost.bottleneck_s, c.time_s, c.cut_s});
    cost.stages.push_back(c);
  }
  return cost;
}

}  // namespace pipetwin
