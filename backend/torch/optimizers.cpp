#include "backend/torch/optimizers.h"

namespace pipetwin {

std::unique_ptr<torch::optim::Optimizer> make_optimizer(proto::Optimizer kind,
                                                        std::vector<torch::Tensor> params) {
  switch (kind) {
    case proto::SGD:
      return std::make_unique<torch::optim::SGD>(params, torch::optim::SGDOptions(0.05));
    case proto::MOMENTUM:
      return std::make_unique<torch::optim::SGD>(params,
                                                 torch::optim::SGDOptions(0.05).momentum(0.9));
    case proto::ADAM:
      return std::make_unique<torch::optim::Adam>(params, torch::optim::AdamOptions(1e-3));
  }
  return nullptr;
}

}  // namespace pipetwin
