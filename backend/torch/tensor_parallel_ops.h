// Megatron-LM's conjugate communication operators (Shoeybi et al. 2019; with sequence
// parallelism, Korthikanti et al. 2022) as autograd functions over a stage's
// tensor-parallel group. Each forward collective has its conjugate in the backward, so a
// split layer's gradients equal those of the whole layer. The collectives run where the
// operator sits, inside a rank's forward or backward: every rank of the group runs the same
// layers in the same order, so they meet.
#pragma once

#include <cstdint>

#include "backend/torch/tensor_parallel_group.h"
#include "backend/torch/torch_pch.h"

namespace pipetwin {

// Activations are [batch, sequence, hidden]: sequence parallelism splits this dimension.
constexpr int64_t kSequenceDim = 1;

// "f": identity forward, all-reduce of the gradient backward. Enters a column-parallel
// linear, whose ranks each produce part of the input's gradient.
torch::Tensor copy_to_tensor_parallel(const torch::Tensor& x, const TensorParallelGroup& group);

// "g": all-reduce forward, identity backward. Leaves a row-parallel linear, whose ranks
// each produce part of the output.
torch::Tensor reduce_from_tensor_parallel(const torch::Tensor& x, const TensorParallelGroup& group);

// Sequence parallelism's "f": all-gather along `dim` (the sequence) forward,
// reduce-scatter of the gradient backward.
torch::Tensor gather_from_sequence_parallel(const torch::Tensor& x,
                                            const TensorParallelGroup& group, int64_t dim);

// Sequence parallelism's "g": reduce-scatter along `dim` forward, all-gather of the
// gradient backward.
torch::Tensor reduce_scatter_to_sequence_parallel(const torch::Tensor& x,
                                                  const TensorParallelGroup& group, int64_t dim);

// All-gather along `dim` forward, this rank's slice of the gradient backward: the
// vocabulary-parallel logits made whole for the loss, which every rank computes alike.
torch::Tensor gather_from_tensor_parallel(const torch::Tensor& x, const TensorParallelGroup& group,
                                          int64_t dim);

// The operator before a column-parallel linear and after a row-parallel one, as the group
// runs: f and g, or their sequence-parallel forms along `sequence_dim`.
torch::Tensor enter_tensor_parallel(const torch::Tensor& x, const TensorParallelGroup& group,
                                    int64_t sequence_dim);
torch::Tensor leave_tensor_parallel(const torch::Tensor& x, const TensorParallelGroup& group,
                                    int64_t sequence_dim);

}  // namespace pipetwin
