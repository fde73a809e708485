#include "sim/model/activation_recompute.h"

#include <algorithm>
#include <stdexcept>

#include "sim/model/backward_split.h"

namespace pipetwin {
namespace {

// The backward that reruns the forward first pays both. Measured points would need the two
// curves sampled at the same sizes; the layers that recompute count FLOPs instead.
void add_forward_to_backward(ModelLayer& layer) {
  if (!layer.fwd.points.empty() || !layer.bwd.points.empty()) {
    throw std::logic_error("recomputation of measured layer costs: " + layer.name);
  }
  layer.bwd.seconds_per_sample += layer.fwd.seconds_per_sample;
  layer.bwd.undivided_seconds_per_sample += layer.fwd.undivided_seconds_per_sample;
  layer.bwd.flops_per_sample += layer.fwd.flops_per_sample;
  layer.bwd.fixed_s += layer.fwd.fixed_s;
  layer.bwd.fixed_flops += layer.fwd.fixed_flops;
}

}  // namespace

bool has_recomputable_layers(const ModelSpec& model) {
  return std::any_of(model.layers.begin(), model.layers.end(),
                     [](const ModelLayer& l) { return l.checkpoint_bytes_per_sample > 0; });
}

void apply_activation_recompute(ModelSpec& model, proto::Training::Recompute mode) {
  if (mode == proto::Training::NONE) return;
  for (ModelLayer& layer : model.layers) {
    if (layer.frozen || layer.checkpoint_bytes_per_sample <= 0) continue;
    if (mode == proto::Training::SELECTIVE) {
      // The attention core splits by heads: none of it is in the undivided part.
      layer.transient_bytes_per_sample = layer.attention_stash_bytes_per_sample;
      layer.transient_undivided_bytes_per_sample = 0;
      layer.stash_bytes_per_sample -= layer.attention_stash_bytes_per_sample;
      // The core's GEMMs (QK^T, the product with V) and its memory-bound kernels (scale,
      // mask, softmax, dropout) run again, each at its own throughput.
      layer.bwd.flops_per_sample += layer.attention_flops_per_sample;
      layer.bwd.seconds_per_sample += layer.attention_memory_seconds_per_sample;
    } else {
      // Zero-bubble schedules: W needs its share of the former stash, which B's rerun of the
      // forward rebuilds and holds until W.
      layer.bwd_weight_stash_bytes_per_sample = weight_gradient_stash_per_sample(layer);
      layer.weight_stash_rebuilt = true;
      layer.transient_bytes_per_sample = layer.stash_bytes_per_sample;
      layer.transient_undivided_bytes_per_sample = layer.tp_undivided_stash_bytes_per_sample;
      layer.stash_bytes_per_sample = layer.checkpoint_bytes_per_sample;
      // Megatron keeps the input whole on each GPU of the stage; sequence parallelism splits
      // it (build_program.cpp divides what is not undivided).
      layer.tp_undivided_stash_bytes_per_sample = layer.checkpoint_bytes_per_sample;
      add_forward_to_backward(layer);
      layer.tp_bwd_collectives += layer.tp_fwd_collectives;
      layer.tp_bwd_extra_bytes_per_sample += layer.tp_fwd_extra_bytes_per_sample;
      layer.ep_bwd_all_to_alls += layer.ep_fwd_all_to_alls;
    }
  }
}

}  // namespace pipetwin
