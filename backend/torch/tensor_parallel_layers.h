// Zoo layers split across the T ranks of a stage, Megatron-LM style:
//   * GPT block: QKV column-parallel (each rank 1/T of the heads), the attention output
//     projection row-parallel; the MLP's first linear column-parallel, its second
//     row-parallel; layernorms and the row-parallel biases whole on every rank (a bias is
//     added once, after the reduction);
//   * embedding: the token table vocabulary-parallel (each rank looks up the ids in its
//     1/T of the vocabulary, zeros elsewhere, then the sum over the group), positions whole;
//   * head: the final layernorm whole, the logits vocabulary-parallel, gathered whole for
//     the loss;
//   * MLP: layers in pairs, the first column-parallel, the second row-parallel.
// Each split layer is cut from the whole layer built as the single-process reference
// builds it, so the split model starts from the reference's weights.
// With sequence parallelism the activations between the split regions (a block's input
// and output, the embedding's output, the head's input) hold 1/T of the sequence.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backend/torch/tensor_parallel_group.h"
#include "backend/torch/torch_pch.h"
#include "sim/model/zoo_architecture.h"

namespace pipetwin {

// What every split layer tells about its parameters.
class TensorParallelLayer {
 public:
  virtual ~TensorParallelLayer() = default;
  // The parameters every rank of the group holds whole (layernorms, row-parallel biases,
  // position embeddings); the others are this rank's shards.
  virtual std::vector<torch::Tensor> replicated_parameters() = 0;
};

// Rank `group.rank`'s part of layer `l`, cut from `whole` (the layer zoo_layers builds).
torch::nn::AnyModule split_layer(const ZooArchitecture& arch, int l, torch::nn::Module& whole,
                                 const TensorParallelGroup& group);

// The replicated parameters of `layer` (none if it is not split).
std::vector<torch::Tensor> replicated_parameters(torch::nn::Module& layer);

// The parameters this rank counts in a statistic of the whole model (a weight sum, a
// gradient norm): its shards, and the replicated parameters on tp rank 0 only.
std::vector<torch::Tensor> counted_parameters(torch::nn::Module& layer, int32_t tp_rank);

// The per-sample shape one rank holds at the input of layer `boundary` (the model's output
// for the last): a column-parallel MLP layer's output has 1/T of the features; with
// sequence parallelism a GPT's hidden states have 1/T of the sequence.
std::vector<int64_t> rank_boundary_shape(const ZooArchitecture& arch, int boundary,
                                         const TensorParallelGroup& group);

// Why `arch` cannot split `size` ways on real ranks (naming the field), or "".
std::string tensor_parallel_unsupported(const ZooArchitecture& arch, const proto::Zoo& zoo,
                                        int32_t size, bool sequence_parallel);

}  // namespace pipetwin
