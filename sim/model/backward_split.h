// Zero-bubble schedules split a layer's backward into the input gradient (B) and the
// weight gradients (W). A model source may state W's cost and the stash W still needs
// (ModelLayer::bwd_weight, bwd_weight_stash_bytes_per_sample); where it does not, W is half
// the backward and holds the whole stash until it runs (docs/schedules.md).
#pragma once

#include "sim/spec/model_spec.h"

namespace pipetwin {

// W's cost: the layer's own, or half its backward.
LayerCost weight_gradient_cost(const ModelLayer& layer);
// B's cost: the backward less W's.
LayerCost input_gradient_cost(const ModelLayer& layer);
// Bytes per sample of the stash held from B until W ends (at most the whole stash).
double weight_gradient_stash_per_sample(const ModelLayer& layer);

}  // namespace pipetwin
