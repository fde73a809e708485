#include "backend/torch/tensor_parallel_group.h"

#include <stdexcept>

namespace pipetwin {

std::vector<int> tensor_parallel_ranks(int rank, int32_t size) {
  std::vector<int> ranks;
  for (int t = 0; t < size; ++t) ranks.push_back(rank / size * size + t);
  return ranks;
}

namespace {

c10d::ProcessGroupGloo& gloo_of(const TensorParallelGroup& group) {
  if (!group.gloo) throw std::logic_error("a tensor-parallel collective without a Gloo group");
  return *group.gloo;
}

}  // namespace

torch::Tensor all_reduce_sum(const torch::Tensor& x, const TensorParallelGroup& group) {
  // Gloo sums in place into a dense buffer: never into a tensor autograd may still read.
  std::vector<torch::Tensor> buffer = {x.detach().contiguous().clone()};
  gloo_of(group).allreduce(buffer)->wait();
  return buffer[0];
}

torch::Tensor all_gather(const torch::Tensor& x, const TensorParallelGroup& group, int64_t dim) {
  std::vector<torch::Tensor> input = {x.detach().contiguous()};
  std::vector<std::vector<torch::Tensor>> output(1);
  for (int32_t t = 0; t < group.size; ++t) output[0].push_back(torch::empty_like(input[0]));
  gloo_of(group).allgather(output, input)->wait();
  return torch::cat(output[0], dim);
}

torch::Tensor own_slice(const torch::Tensor& x, const TensorParallelGroup& group, int64_t dim) {
  if (x.size(dim) % group.size != 0) {
    throw std::logic_error("a dimension of " + std::to_string(x.size(dim)) + " does not split " +
                           std::to_string(group.size) + " ways");
  }
  return x.chunk(group.size, dim)[group.rank].contiguous();
}

torch::Tensor reduce_scatter(const torch::Tensor& x, const TensorParallelGroup& group,
                             int64_t dim) {
  return own_slice(all_reduce_sum(x, group), group, dim);
}

void all_reduce_gradients(const std::vector<torch::Tensor>& parameters,
                          c10d::ProcessGroupGloo& group) {
  std::vector<torch::Tensor> grads;
  for (const auto& p : parameters) {
    if (p.grad().defined()) grads.push_back(p.grad().flatten());
  }
  if (grads.empty()) return;
  std::vector<torch::Tensor> flat = {torch::cat(grads)};
  group.allreduce(flat)->wait();
  int64_t offset = 0;
  for (const auto& p : parameters) {
    if (!p.grad().defined()) continue;
    const int64_t n = p.grad().numel();
    p.mutable_grad().copy_(flat[0].slice(0, offset, offset + n).view_as(p.grad()));
    offset += n;
  }
}

void all_reduce_gradients(const std::vector<torch::Tensor>& parameters,
                          const TensorParallelGroup& group) {
  all_reduce_gradients(parameters, gloo_of(group));
}

}  // namespace pipetwin
