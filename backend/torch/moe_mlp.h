// A mixture-of-experts MLP as Mixtral, Qwen-MoE and DeepSeek-V3 run it: a router picks each
// token's top-k experts (softmax over all experts, the k chosen weights renormalised when
// k > 1), each expert is a gated MLP of expert_ffn, and shared experts see every token.
// Dropless: every token reaches its experts (capacity_factor stays a simulator knob), so the
// layer computes each token alone, however tokens are grouped into microbatches or ranks.
// With expert parallelism a rank holds its group's share of the experts and exchanges the
// tokens with the others: a dispatch all-to-all before the experts, a combine all-to-all
// after (and both again, reversed, in the backward).
// With tensor parallelism (and so sequence parallelism, as Megatron-Core requires with
// experts) each rank routes its 1/T of the sequence. Whole experts (expert tensor
// parallelism 1, the expert group folded over the tensor-parallel ranks) take those tokens
// as they are; experts split like the dense MLP first gather the group's tokens, each rank
// computing its 1/T of every expert's width, and reduce-scatter the result back. Shared
// experts always split like the dense MLP.
#pragma once

#include <cstdint>
#include <vector>

#include "backend/torch/expert_parallel_group.h"
#include "backend/torch/tensor_parallel_group.h"
#include "backend/torch/torch_pch.h"
#include "sim/model/transformer_shape.h"

namespace pipetwin {

// A gated (SwiGLU: down(silu(gate x) * up x)) or plain GELU (down(gelu(up x))) MLP without
// biases: the dense MLP of a block, one expert, or the shared experts.
struct GatedMlpImpl : torch::nn::Module {
  GatedMlpImpl(int64_t hidden, int64_t width, bool swiglu);
  torch::Tensor forward(const torch::Tensor& x);
  // Keeps rank t's 1/T of the width: gate and up column-parallel, down row-parallel. The
  // output is then this rank's part of a sum over the group.
  void split(const TensorParallelGroup& group);
  torch::nn::Linear gate{nullptr}, up{nullptr}, down{nullptr};
};
TORCH_MODULE(GatedMlp);

// What a layer with experts tells about its parameters.
class ExpertLayer {
 public:
  virtual ~ExpertLayer() = default;
  // The parameters of the experts this rank holds: under expert parallelism they differ
  // between the ranks of the group, so their gradients sum over other ranks than the rest.
  virtual std::vector<torch::Tensor> expert_parameters() = 0;
};

struct MoeMlpImpl : torch::nn::Module {
  // Every expert is drawn, in order, whatever the group, so that expert e starts with the
  // same weights on whichever rank holds it; the rank keeps its own.
  MoeMlpImpl(const TransformerShape& shape, const ExpertParallelGroup& group,
             const TensorParallelGroup& tensor_parallel = {});
  torch::Tensor forward(const torch::Tensor& x);  // [B, S (/T), H] -> the same
  std::vector<torch::Tensor> expert_parameters();
  // The router: whole on every tensor-parallel rank, seeing its 1/T of the tokens.
  std::vector<torch::Tensor> router_parameters() { return router->parameters(); }

  int64_t first_expert() const { return group_.rank * local_experts(); }
  int64_t local_experts() const { return experts_ / group_.size; }

 private:
  // Runs rows grouped by this rank's experts, `rows_per_expert[j]` for its j-th.
  torch::Tensor run_local(const torch::Tensor& rows, const std::vector<int64_t>& rows_per_expert);
  // Rows sorted by expert, `counts[e]` for expert e, through the ranks that hold them.
  torch::Tensor run_across_ranks(const torch::Tensor& rows, const torch::Tensor& counts);

  int64_t hidden_, experts_, top_k_;
  ExpertParallelGroup group_;
  TensorParallelGroup tensor_parallel_;
  torch::nn::Linear router{nullptr};
  std::vector<GatedMlp> local_;  // experts [first_expert, first_expert + local_experts)
  GatedMlp shared{nullptr};
};
TORCH_MODULE(MoeMlp);

}  // namespace pipetwin
