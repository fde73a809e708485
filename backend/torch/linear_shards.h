// Megatron-LM's cuts of one whole linear layer (built as the single-process reference builds
// it, so that the split model starts from the reference's weights) into rank t's share of a
// tensor-parallel group, in place: the layer keeps its parameters' names, only their shapes
// change.
#pragma once

#include <cstdint>

#include "backend/torch/tensor_parallel_group.h"
#include "backend/torch/torch_pch.h"

namespace pipetwin {

// Rank t's 1/T of `parameter` along `dim`, in its place.
void keep_shard(torch::Tensor& parameter, int64_t dim, const TensorParallelGroup& group);

// Column-parallel: 1/T of the output features (rows of the weight, and of the bias).
void keep_output_shard(torch::nn::Linear& linear, const TensorParallelGroup& group);

// Row-parallel: 1/T of the input features (columns of the weight). A bias is added once,
// after the sum over the group, so it stays whole.
void keep_input_shard(torch::nn::Linear& linear, const TensorParallelGroup& group);

}  // namespace pipetwin
