// Activation recomputation (Megatron-LM; Korthikanti et al. 2022): trading backward work for
// stash memory in transformer blocks, applied once to the resolved model so that every
// consumer (partitioning, lowering, memory, planners) sees the costs the backward pays.
#pragma once

#include "scenario.pb.h"
#include "sim/spec/model_spec.h"

namespace pipetwin {

// On every trainable layer with recomputation data (the zoo GPT's blocks):
//   SELECTIVE: the stash loses attention_stash_bytes; the backward gains attention_flops and
//              the attention core's memory-bound time (attention_memory_seconds);
//              the backward rebuilds that attention core first (transient).
//   FULL:      the stash is the checkpoint (kept whole on every tensor-parallel GPU unless
//              sequence parallelism splits it); the backward gains the forward's cost and its
//              tensor-parallel collectives; it rebuilds the whole former stash (transient).
// Other layers (embedding, head) keep their activations, as in Megatron-LM.
void apply_activation_recompute(ModelSpec& model, proto::Training::Recompute mode);

// Whether any layer can be recomputed.
bool has_recomputable_layers(const ModelSpec& model);

}  // namespace pipetwin
