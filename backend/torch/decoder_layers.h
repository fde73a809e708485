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
#include "backend/torch/tensor_parallel_group.h"
#include "backend/torch/torch_pch.h"
#include "sim/model/zoo_architecture.h"

namespace pipetwin {

// Layer `layer` of a transformer architecture (a kDecoder* kind), rank t's part of it under
// tensor parallelism (Megatron-LM's split: attention by heads, the MLP by width, embedding and
// logits by vocabulary, norms whole), cut from the whole layer as the reference draws it; an
// MoE block holds the experts of `expert_parallel`'s rank (moe_mlp.h).
torch::nn::AnyModule make_decoder_layer(const ZooArchitecture& arch, const ArchLayer& layer,
                                        const ExpertParallelGroup& expert_parallel,
                                        const TensorParallelGroup& tensor_parallel);

// The parameters of the experts `layer` holds (none when it has no experts).
std::vector<torch::Tensor> expert_parameters(torch::nn::Module& layer);

// `parameters` (of `layer`) split into its experts' and the others, each in their order.
struct ExpertsApart {
  std::vector<torch::Tensor> experts, others;
};
ExpertsApart experts_apart(torch::nn::Module& layer, const std::vector<torch::Tensor>& parameters);

// Why real ranks cannot run this transformer (naming the field), or "". Multi-latent
// attention, tied embeddings and token dropping are simulated only.
std::string decoder_unsupported(const ZooArchitecture& arch);

// Why this transformer cannot split `size` ways (training.tensor_parallel), with its experts
// split too or whole (expert tensor parallelism T or 1), naming the field; or "".
std::string decoder_tensor_parallel_unsupported(const ZooArchitecture& arch, int32_t size,
                                                bool sequence_parallel, bool experts_split);

}  // namespace pipetwin
