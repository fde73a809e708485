// Explicit layers: the scenario states each layer's time and sizes for one reference
// microbatch. We store per-sample values so that every microbatch size (equal or not) is
// a multiplication; validation of the fields happens when the scenario is loaded.
#include <string>
#include <utility>

#include "sim/model/model_sources.h"

namespace pipetwin {

ModelSpec model_from_layers(const proto::Model& model, double reference_microbatch) {
  ModelSpec spec;
  const double per_sample = 1.0 / reference_microbatch;
  const int n = model.layers_size();
  spec.layers.reserve(n);
  for (int i = 0; i < n; ++i) {
    const proto::Layer& in = model.layers(i);
    ModelLayer layer;
    layer.name = in.has_name() ? in.name() : "layer" + std::to_string(i);
    // Three ways to give a cost (the loader checks that exactly one is used): a time for
    // the reference microbatch, scaled linearly; fixed + per-sample; measured points.
    layer.fwd.seconds_per_sample = in.fwd_ms() * 1e-3 * per_sample;
    layer.bwd.seconds_per_sample = in.bwd_ms() * 1e-3 * per_sample;
    if (in.has_fwd_fixed_ms() || in.has_fwd_per_sample_ms()) {
      layer.fwd.fixed_s = in.fwd_fixed_ms() * 1e-3;
      layer.fwd.seconds_per_sample = in.fwd_per_sample_ms() * 1e-3;
    }
    if (in.has_bwd_fixed_ms() || in.has_bwd_per_sample_ms()) {
      layer.bwd.fixed_s = in.bwd_fixed_ms() * 1e-3;
      layer.bwd.seconds_per_sample = in.bwd_per_sample_ms() * 1e-3;
    }
    for (const proto::CostPoint& point : in.cost_points()) {
      layer.fwd.points.emplace_back(point.batch(), point.fwd_ms() * 1e-3);
      layer.bwd.points.emplace_back(point.batch(), point.bwd_ms() * 1e-3);
    }
    // The weight-gradient part of the backward, in the backward's form (unset: half).
    if (in.has_bwd_weight_ms()) {
      layer.bwd_weight = LayerCost{};
      layer.bwd_weight->seconds_per_sample = in.bwd_weight_ms() * 1e-3 * per_sample;
    }
    if (in.has_bwd_weight_fixed_ms() || in.has_bwd_weight_per_sample_ms()) {
      layer.bwd_weight = LayerCost{};
      layer.bwd_weight->fixed_s = in.bwd_weight_fixed_ms() * 1e-3;
      layer.bwd_weight->seconds_per_sample = in.bwd_weight_per_sample_ms() * 1e-3;
    }
    if (in.cost_points_size() > 0 && in.cost_points(0).has_bwd_weight_ms()) {
      layer.bwd_weight = LayerCost{};
      for (const proto::CostPoint& point : in.cost_points()) {
        layer.bwd_weight->points.emplace_back(point.batch(), point.bwd_weight_ms() * 1e-3);
      }
    }
    if (in.has_bwd_weight_stash_bytes()) {
      layer.bwd_weight_stash_bytes_per_sample =
          static_cast<double>(in.bwd_weight_stash_bytes()) * per_sample;
    }
    layer.activation_bytes_per_sample = static_cast<double>(in.activation_bytes()) * per_sample;
    // Unset stash means "keep the output", the common case for a plain layer.
    const int64_t stash = in.has_stash_bytes() ? in.stash_bytes() : in.activation_bytes();
    layer.stash_bytes_per_sample = static_cast<double>(stash) * per_sample;
    layer.optim_seconds = in.optim_ms() * 1e-3;
    // Weights do not scale with the batch.
    layer.parameter_bytes = in.parameter_bytes();
    if (i + 1 < n) layer.consumers = {i + 1};
    spec.layers.push_back(std::move(layer));
  }
  return spec;
}

}  // namespace pipetwin
