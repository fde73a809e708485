#include "sim/planner/planner_problem.h"

#include <map>
#include <tuple>
#include <utility>

#include "sim/model/training_memory.h"

namespace pipetwin {

PlannerProblem planner_problem(const ResolvedScenario& setup) {
  PlannerProblem p;
  p.model = setup.model;
  p.microbatches = setup.training.microbatches;
  p.microbatch_samples =
      static_cast<double>(setup.training.global_batch) / setup.training.microbatches;
  const ClusterSpec& cluster = setup.cluster;
  p.nodes = cluster.nodes;
  p.gpus_per_node = cluster.gpus_per_node;
  p.intra_node = cluster.intra_node;
  p.inter_node = cluster.inter_node;

  // Devices of equal peak, compute_scale (cluster.overrides) and memory form a class.
  std::map<std::tuple<double, double, double>, int> class_of;
  std::vector<double> class_flops, class_scale;
  for (const DeviceSpec& device : cluster.devices) {
    const auto key = std::tuple{device.peak_flops, device.compute_scale, device.memory_bytes};
    const auto [it, inserted] = class_of.emplace(key, static_cast<int>(class_flops.size()));
    if (inserted) {
      class_flops.push_back(device.peak_flops * setup.model.efficiency);
      class_scale.push_back(device.compute_scale);
      p.class_memory_bytes.push_back(device.memory_bytes);
    }
    p.device_class.push_back(it->second);
    p.device_node.push_back(device.node);
  }

  const BytesPerParameter per_parameter = bytes_per_parameter(setup.training);
  const double b = p.microbatch_samples;
  p.layer_seconds.assign(class_flops.size(), {});
  for (const ModelLayer& layer : p.model.layers) {
    const double parameters = static_cast<double>(layer.parameter_bytes) / kFp32BytesPerParameter;
    for (size_t c = 0; c < class_flops.size(); ++c) {
      // Frozen layers run forward only (FreezePipe).
      const double bwd = layer.frozen ? 0 : layer.bwd.seconds(b, class_flops[c]);
      p.layer_seconds[c].push_back((layer.fwd.seconds(b, class_flops[c]) + bwd) / class_scale[c]);
    }
    p.layer_resident_bytes.push_back(
        parameters * (layer.frozen ? per_parameter.weights : per_parameter.total()));
    p.layer_gradient_bytes.push_back(layer.frozen ? 0 : parameters * per_parameter.gradients);
    p.layer_stash_bytes.push_back(layer.frozen ? 0 : layer.stash_bytes_per_sample * b);
    p.layer_output_bytes.push_back(layer.activation_bytes_per_sample * b);
  }
  return p;
}

}  // namespace pipetwin
