#include "backend/torch/moe_mlp.h"

#include <string>

#include "backend/torch/linear_shards.h"
#include "backend/torch/tensor_parallel_ops.h"

namespace pipetwin {
namespace {

torch::nn::Linear no_bias(int64_t in, int64_t out) {
  return torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(false));
}

std::vector<int64_t> as_vector(const torch::Tensor& counts) {
  const torch::Tensor c = counts.to(torch::kLong).contiguous();
  return std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}

}  // namespace

GatedMlpImpl::GatedMlpImpl(int64_t hidden, int64_t width, bool swiglu) {
  if (swiglu) gate = register_module("gate", no_bias(hidden, width));
  up = register_module("up", no_bias(hidden, width));
  down = register_module("down", no_bias(width, hidden));
}

torch::Tensor GatedMlpImpl::forward(const torch::Tensor& x) {
  if (gate) return down(torch::silu(gate(x)) * up(x));
  return down(torch::gelu(up(x)));
}

void GatedMlpImpl::split(const TensorParallelGroup& group) {
  if (gate) keep_output_shard(gate, group);
  keep_output_shard(up, group);
  keep_input_shard(down, group);
}

MoeMlpImpl::MoeMlpImpl(const TransformerShape& shape, const ExpertParallelGroup& group,
                       const TensorParallelGroup& tensor_parallel)
    : hidden_(shape.hidden),
      experts_(shape.moe.experts),
      top_k_(shape.moe.top_k),
      group_(group),
      tensor_parallel_(tensor_parallel),
      router(register_module(
          "router", torch::nn::Linear(torch::nn::LinearOptions(shape.hidden, shape.moe.experts)
                                          .bias(shape.moe.router_bias)))) {
  for (int64_t e = 0; e < experts_; ++e) {
    GatedMlp expert(shape.hidden, shape.moe.expert_ffn, shape.swiglu);
    if (e < first_expert() || e >= first_expert() + local_experts()) continue;
    if (group_.experts_split) expert->split(tensor_parallel_);
    local_.push_back(register_module("expert_" + std::to_string(e), expert));
  }
  if (shape.moe.shared_experts > 0) {
    shared = register_module(
        "shared",
        GatedMlp(shape.hidden, shape.moe.shared_experts * shape.moe.expert_ffn, shape.swiglu));
    if (tensor_parallel_.splits()) shared->split(tensor_parallel_);
  }
}

std::vector<torch::Tensor> MoeMlpImpl::expert_parameters() {
  std::vector<torch::Tensor> parameters;
  for (GatedMlp& expert : local_) {
    for (const auto& p : expert->parameters()) parameters.push_back(p);
  }
  return parameters;
}

torch::Tensor MoeMlpImpl::forward(const torch::Tensor& x) {
  // x: [B, S, H], or [B, S/T, H] with tensor (and so sequence) parallelism.
  constexpr int64_t kSequenceDim = 1;
  const torch::Tensor flat = x.reshape({-1, hidden_});
  const torch::Tensor probabilities = torch::softmax(router(flat), -1);
  auto [weights, chosen] = probabilities.topk(top_k_, -1);
  torch::Tensor gates = top_k_ > 1 ? weights / weights.sum(-1, true) : weights;
  // Split experts see every rank's tokens (each computes its part of every expert's width).
  torch::Tensor tokens = flat;
  if (group_.experts_split) {
    tokens = gather_from_sequence_parallel(flat, tensor_parallel_, 0);
    gates = gather_from_sequence_parallel(gates, tensor_parallel_, 0);
    chosen = all_gather(chosen, tensor_parallel_, 0);
  }
  // Each (token, choice) as a row, sorted by expert: a stable sort keeps every expert's
  // tokens in token order, so the same tokens meet the same expert in the same order.
  const torch::Tensor expert_of = chosen.reshape({-1});
  const torch::Tensor order =
      std::get<1>(expert_of.sort(/*stable=*/c10::optional<bool>(true), /*dim=*/0));
  const torch::Tensor token_of = torch::div(order, top_k_, "floor");
  const torch::Tensor counts = torch::bincount(expert_of, {}, experts_);
  const torch::Tensor routed = tokens.index_select(0, token_of);
  const torch::Tensor out =
      group_.splits() ? run_across_ranks(routed, counts) : run_local(routed, as_vector(counts));
  const torch::Tensor weighted = out * gates.reshape({-1}).index_select(0, order).unsqueeze(1);
  torch::Tensor combined = torch::zeros_like(tokens).index_add(0, token_of, weighted);
  if (group_.experts_split) {
    // Every rank's part of every token's output: summed, each rank keeping its tokens.
    if (shared) combined = combined + shared->forward(tokens);
    return reduce_scatter_to_sequence_parallel(combined, tensor_parallel_, 0).view(x.sizes());
  }
  if (shared && tensor_parallel_.splits()) {
    const torch::Tensor whole = enter_tensor_parallel(x, tensor_parallel_, kSequenceDim);
    return combined.view(x.sizes()) +
           leave_tensor_parallel(shared->forward(whole), tensor_parallel_, kSequenceDim);
  }
  if (shared) combined = combined + shared->forward(flat);
  return combined.view(x.sizes());
}

torch::Tensor MoeMlpImpl::run_local(const torch::Tensor& rows,
                                    const std::vector<int64_t>& rows_per_expert) {
  std::vector<torch::Tensor> outs;
  int64_t at = 0;
  for (size_t j = 0; j < local_.size(); ++j) {
    outs.push_back(local_[j]->forward(rows.slice(0, at, at + rows_per_expert[j])));
    at += rows_per_expert[j];
  }
  return torch::cat(outs);
}

torch::Tensor MoeMlpImpl::run_across_ranks(const torch::Tensor& rows, const torch::Tensor& counts) {
  const int64_t ranks = group_.size, local = local_experts();
  // received[src * local + j]: the rows rank src sends to this rank's j-th expert.
  const std::vector<int64_t> sent = as_vector(counts);
  const std::vector<int64_t> received = as_vector(exchange_counts(counts, group_));
  std::vector<int64_t> send_rows(ranks, 0), receive_rows(ranks, 0), rows_per_expert(local, 0);
  for (int64_t r = 0; r < ranks; ++r) {
    for (int64_t j = 0; j < local; ++j) {
      send_rows[r] += sent[r * local + j];
      receive_rows[r] += received[r * local + j];
      rows_per_expert[j] += received[r * local + j];
    }
  }
  // Dispatch: the rows arrive by source rank, then by expert; regroup them by expert.
  const torch::Tensor arrived = exchange_rows(rows, send_rows, receive_rows, group_);
  std::vector<int64_t> start(ranks * local, 0);
  int64_t at = 0;
  for (int64_t b = 0; b < ranks * local; ++b) {
    start[b] = at;
    at += received[b];
  }
  std::vector<int64_t> by_expert;
  by_expert.reserve(at);
  for (int64_t j = 0; j < local; ++j) {
    for (int64_t r = 0; r < ranks; ++r) {
      const int64_t b = r * local + j;
      for (int64_t row = start[b]; row < start[b] + received[b]; ++row) by_expert.push_back(row);
    }
  }
  const torch::Tensor grouping = torch::tensor(by_expert, torch::kLong);
  const torch::Tensor done = run_local(arrived.index_select(0, grouping), rows_per_expert);
  // Combine: back into arrival order, and back to the ranks the rows came from.
  const torch::Tensor ungrouping = std::get<1>(grouping.sort());
  return exchange_rows(done.index_select(0, ungrouping), receive_rows, send_rows, group_);
}

}  // namespace pipetwin
