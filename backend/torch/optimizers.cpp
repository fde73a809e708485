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

namespace {

// The key LibTorch's optimizers file a parameter's state under (as torch/optim/serialize.h).
std::string state_key(const torch::Tensor& parameter) {
  return c10::guts::to_string(parameter.unsafeGetTensorImpl());
}

}  // namespace

int state_tensors_per_parameter(proto::Optimizer kind) {
  switch (kind) {
    case proto::SGD:
      return 0;
    case proto::MOMENTUM:
      return 1;
    case proto::ADAM:
      return 2;
  }
  return 0;
}

ParameterState parameter_state(torch::optim::Optimizer& optimizer, proto::Optimizer kind,
                               const torch::Tensor& parameter) {
  ParameterState state;
  const auto found = optimizer.state().find(state_key(parameter));
  const bool stepped = found != optimizer.state().end();
  auto zeros = [&] { return torch::zeros_like(parameter); };
  if (kind == proto::MOMENTUM) {
    const auto* s =
        stepped ? static_cast<torch::optim::SGDParamState*>(found->second.get()) : nullptr;
    state.tensors = {s && s->momentum_buffer().defined() ? s->momentum_buffer() : zeros()};
  } else if (kind == proto::ADAM) {
    const auto* s =
        stepped ? static_cast<torch::optim::AdamParamState*>(found->second.get()) : nullptr;
    state.tensors = {s ? s->exp_avg() : zeros(), s ? s->exp_avg_sq() : zeros()};
    state.step = s ? s->step() : 0;
  }
  return state;
}

void set_parameter_state(torch::optim::Optimizer& optimizer, proto::Optimizer kind,
                         const torch::Tensor& parameter, const ParameterState& state) {
  if (kind == proto::MOMENTUM) {
    auto s = std::make_unique<torch::optim::SGDParamState>();
    s->momentum_buffer(state.tensors.at(0).clone());
    optimizer.state()[state_key(parameter)] = std::move(s);
  } else if (kind == proto::ADAM && state.step > 0) {  // Adam starts its state at step 1
    auto s = std::make_unique<torch::optim::AdamParamState>();
    s->step(state.step);
    s->exp_avg(state.tensors.at(0).clone());
    s->exp_avg_sq(state.tensors.at(1).clone());
    optimizer.state()[state_key(parameter)] = std::move(s);
  }
}

}  // namespace pipetwin
