#include "backend/torch/linear_shards.h"

namespace pipetwin {

// set_data replaces the values and the shape and keeps the parameter (and its name) itself.
void keep_shard(torch::Tensor& parameter, int64_t dim, const TensorParallelGroup& group) {
  const torch::NoGradGuard no_grad;
  parameter.set_data(own_slice(parameter, group, dim).clone());
}

void keep_output_shard(torch::nn::Linear& linear, const TensorParallelGroup& group) {
  keep_shard(linear->weight, 0, group);
  if (linear->bias.defined()) keep_shard(linear->bias, 0, group);
}

void keep_input_shard(torch::nn::Linear& linear, const TensorParallelGroup& group) {
  keep_shard(linear->weight, 1, group);
}

}  // namespace pipetwin
