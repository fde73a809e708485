// The optimizers training.optimizer names, with the learning rates the backend uses
// (SGD 0.05; momentum 0.9 at 0.05; Adam 1e-3).
#pragma once

#include <memory>
#include <vector>

#include "backend/torch/torch_pch.h"
#include "scenario.pb.h"

namespace pipetwin {

std::unique_ptr<torch::optim::Optimizer> make_optimizer(proto::Optimizer kind,
                                                        std::vector<torch::Tensor> params);

}  // namespace pipetwin
