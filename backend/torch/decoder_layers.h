// The zoo's "transformer" as LibTorch modules, layer for layer as the cost model counts it
// (sim/model/transformer_shape.h): a token embedding; blocks of pre-norm (RMSNorm or
// LayerNorm) grouped-query causal attention with rotary position embeddings, then a gated
// or plain MLP, or a mixture-of-experts MLP (moe_mlp.h); a final norm and untied logits.
// No biases but the optional QKV bias, as Llama, Qwen and Mixtral have it, so that every
// layer's parameter count is the shape's.
#pragma once

#include <string>
#include <vector>

#include "backend/torch/expert_parallel_group.h"
#include "backend/torch/torch_pch.h"
#include "sim/model/zoo_architecture.h"

namespace pipetwin {

// Layer `layer` of a transformer architecture (a kDecoder* kind); an MoE block holds the
// experts of `expert_parallel`'s rank.
torch::nn::AnyModule make_decoder_layer(const ZooArchitecture& arch, const ArchLayer& layer,
                                        const ExpertParallelGroup& expert_parallel);

// The parameters of the experts `layer` holds (none when it has no experts).
std::vector<torch::Tensor> expert_parameters(torch::nn::Module& layer);

// Why real ranks cannot run this transformer (naming the field), or "". Multi-latent
// attention, tied embeddings and token dropping are simulated only.
std::string decoder_unsupported(const ZooArchitecture& arch);

}  // namespace pipetwin
