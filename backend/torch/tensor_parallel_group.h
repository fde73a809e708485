// The T ranks that split one pipeline stage's layers (tensor parallelism), as a rank's
// layers see them, and the plain collectives those layers need over its Gloo group.
// Ranks are numbered tp innermost (rank t + T (s + P r)), as the simulator numbers GPUs,
// so a stage's group is T consecutive ranks.
#pragma once

#include <cstdint>
#include <vector>

#include "backend/torch/torch_pch.h"

namespace pipetwin {

struct TensorParallelGroup {
  int32_t size = 1;                        // T: 1 means the layers are whole
  int32_t rank = 0;                        // t, this rank's place in the group
  bool sequence_parallel = false;          // activations between blocks split along the sequence
  c10d::ProcessGroupGloo* gloo = nullptr;  // the T ranks; null when size is 1

  bool splits() const { return size > 1; }
};

// The world ranks of the tensor-parallel group that world rank `rank` belongs to.
std::vector<int> tensor_parallel_ranks(int rank, int32_t size);

// Sum over the group, returned as a new tensor (x is left as it is).
torch::Tensor all_reduce_sum(const torch::Tensor& x, const TensorParallelGroup& group);

// Every rank's x concatenated along `dim`, in rank order.
torch::Tensor all_gather(const torch::Tensor& x, const TensorParallelGroup& group, int64_t dim);

// The sum over the group, of which this rank keeps its 1/T slice along `dim`. Gloo in this
// LibTorch has no reduce-scatter: an all-reduce and a slice give the same numbers.
torch::Tensor reduce_scatter(const torch::Tensor& x, const TensorParallelGroup& group, int64_t dim);

// This rank's 1/T slice of x along `dim` (a copy, contiguous).
torch::Tensor own_slice(const torch::Tensor& x, const TensorParallelGroup& group, int64_t dim);

// Sums the defined gradients of `parameters` over the group in place, in one all-reduce.
void all_reduce_gradients(const std::vector<torch::Tensor>& parameters,
                          const TensorParallelGroup& group);
// The same over any Gloo group (a stage's replicas, or those holding the same experts).
void all_reduce_gradients(const std::vector<torch::Tensor>& parameters,
                          c10d::ProcessGroupGloo& group);

}  // namespace pipetwin
