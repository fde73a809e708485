// The optimizers training.optimizer names, with the learning rates the backend uses
// (SGD 0.05; momentum 0.9 at 0.05; Adam 1e-3), and access to their per-parameter state,
// which moves with a layer when a repartition migrates it.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "backend/torch/torch_pch.h"
#include "scenario.pb.h"

namespace pipetwin {

std::unique_ptr<torch::optim::Optimizer> make_optimizer(proto::Optimizer kind,
                                                        std::vector<torch::Tensor> params);

// A parameter's optimizer state: the tensors shaped like it (Adam: first and second
// moments; momentum: its buffer; SGD: none), the bytes training_memory.h counts as
// optimizer state, and Adam's step count. Before the first step the tensors are zeros.
struct ParameterState {
  std::vector<torch::Tensor> tensors;
  int64_t step = 0;
};
ParameterState parameter_state(torch::optim::Optimizer& optimizer, proto::Optimizer kind,
                               const torch::Tensor& parameter);
// Installs `state` (tensors as parameter_state returns them) for `parameter`.
void set_parameter_state(torch::optim::Optimizer& optimizer, proto::Optimizer kind,
                         const torch::Tensor& parameter, const ParameterState& state);
// How many state tensors shaped like a parameter the optimizer keeps.
int state_tensors_per_parameter(proto::Optimizer kind);

}  // namespace pipetwin
