// Zoo models as LibTorch modules, one module per scenario layer, so that any contiguous
// range of layers is a pipeline stage. The layers come from the torch-free architecture
// (sim/model/zoo_architecture.h) that the cost model counts too. Layer l's weights are
// drawn from a generator seeded by (seed, l): a stage's initial weights do not depend on
// how the model is cut.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backend/torch/expert_parallel_group.h"
#include "backend/torch/tensor_parallel_group.h"
#include "backend/torch/torch_pch.h"
#include "sim/model/zoo_architecture.h"

namespace pipetwin {

// Modules for layers [first, last) of the model. When `tensor_parallel` splits, each
// layer is built whole, as the single-process reference builds it, then cut to this
// rank's part (backend/torch/tensor_parallel_layers.h). A mixture-of-experts block holds the
// experts of `expert_parallel`'s rank (backend/torch/moe_mlp.h).
torch::nn::Sequential zoo_layers(const ZooArchitecture& arch, int first, int last, uint64_t seed,
                                 const TensorParallelGroup& tensor_parallel = {},
                                 const ExpertParallelGroup& expert_parallel = {});

// The training loss of a microbatch, as a mean over its samples (and tokens): mean squared
// error for regression, cross-entropy for class ids.
torch::Tensor zoo_loss(const ZooArchitecture& arch, const torch::Tensor& output,
                       const torch::Tensor& target);

// Sum of a layer's parameters: a fingerprint of trained weights, to compare runs.
double parameter_sum(torch::nn::Module& layer);

}  // namespace pipetwin
