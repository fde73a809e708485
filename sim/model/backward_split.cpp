#include "sim/model/backward_split.h"

#include <algorithm>
#include <stdexcept>

namespace pipetwin {
namespace {

LayerCost scaled(const LayerCost& cost, double factor) {
  LayerCost out = cost;
  out.seconds_per_sample *= factor;
  out.flops_per_sample *= factor;
  out.fixed_s *= factor;
  out.fixed_flops *= factor;
  for (auto& point : out.points) point.second *= factor;
  return out;
}

}  // namespace

LayerCost weight_gradient_cost(const ModelLayer& layer) {
  return layer.bwd_weight ? *layer.bwd_weight : scaled(layer.bwd, 0.5);
}

LayerCost input_gradient_cost(const ModelLayer& layer) {
  const LayerCost weight = weight_gradient_cost(layer);
  LayerCost input = layer.bwd;
  input.seconds_per_sample -= weight.seconds_per_sample;
  input.flops_per_sample -= weight.flops_per_sample;
  input.fixed_s -= weight.fixed_s;
  input.fixed_flops -= weight.fixed_flops;
  // Measured points: W is given at the backward's batches (the resolver checks it).
  if (!weight.points.empty()) {
    if (weight.points.size() != input.points.size()) {
      throw std::logic_error("layer " + layer.name + ": W measured at other batches than B");
    }
    for (size_t k = 0; k < input.points.size(); ++k) {
      input.points[k].second -= weight.points[k].second;
    }
  }
  return input;
}

double weight_gradient_stash_per_sample(const ModelLayer& layer) {
  if (!layer.bwd_weight_stash_bytes_per_sample) return layer.stash_bytes_per_sample;
  if (layer.weight_stash_rebuilt) return *layer.bwd_weight_stash_bytes_per_sample;
  return std::min(*layer.bwd_weight_stash_bytes_per_sample, layer.stash_bytes_per_sample);
}

}  // namespace pipetwin
