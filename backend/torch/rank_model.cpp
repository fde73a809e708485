#include "backend/torch/rank_model.h"

#include <stdexcept>
#include <string>

#include "backend/torch/optimizers.h"
#include "backend/torch/zoo_modules.h"

namespace pipetwin {

RankModel::RankModel(const ZooArchitecture& arch, proto::Optimizer optimizer, uint64_t seed,
                     const TensorParallelGroup& tensor_parallel,
                     const ExpertParallelGroup& expert_parallel)
    : arch_(arch),
      kind_(optimizer),
      seed_(seed),
      tensor_parallel_(tensor_parallel),
      expert_parallel_(expert_parallel) {}

torch::nn::AnyModule RankModel::held(int l) {
  const std::lock_guard<std::mutex> lock(mutex_);
  const auto found = layers_.find(l);
  if (found != layers_.end()) return found->second;  // AnyModule copies share the module
  const torch::nn::Sequential built =
      zoo_layers(arch_, l, l + 1, seed_, tensor_parallel_, expert_parallel_);
  if (trains(l)) {
    optimizers_[l] = make_optimizer(kind_, built->parameters());
  } else {
    for (auto& p : built->parameters()) p.requires_grad_(false);
  }
  return layers_[l] = *built->begin();
}

torch::optim::Optimizer& RankModel::trained_optimizer(int l) {
  torch::optim::Optimizer* optimizer = optimizer_of(l);
  if (optimizer == nullptr)
    throw std::logic_error("layer " + std::to_string(l) + " has no optimizer");
  return *optimizer;
}

torch::optim::Optimizer* RankModel::optimizer_of(int l) {
  const std::lock_guard<std::mutex> lock(mutex_);
  const auto found = optimizers_.find(l);
  return found == optimizers_.end() ? nullptr : found->second.get();
}

bool RankModel::holds(int layer) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return layers_.count(layer) > 0;
}

torch::nn::Module& RankModel::layer(int l) {
  const std::lock_guard<std::mutex> lock(mutex_);
  return *layers_.at(l).ptr();
}

torch::nn::Sequential RankModel::stage(int first, int last) {
  torch::nn::Sequential stage;
  for (int l = first; l < last; ++l) stage->push_back(held(l));
  return stage;
}

torch::nn::Sequential RankModel::snapshot(int first, int last) {
  // The layers are not Cloneable: build them again and copy the values in.
  torch::nn::Sequential copy =
      zoo_layers(arch_, first, last, seed_, tensor_parallel_, expert_parallel_);
  const torch::nn::Sequential held = stage(first, last);
  const torch::NoGradGuard no_grad;
  const auto from = held->parameters(), to = copy->parameters();
  for (size_t k = 0; k < from.size(); ++k) {
    to[k].copy_(from[k]);
    to[k].requires_grad_(from[k].requires_grad());
  }
  const auto from_buffers = held->buffers(), to_buffers = copy->buffers();
  for (size_t k = 0; k < from_buffers.size(); ++k) to_buffers[k].copy_(from_buffers[k]);
  return copy;
}

void RankModel::add_gradients_of(torch::nn::Sequential& copy, int first, int last) {
  const auto mine = stage(first, last)->parameters(), theirs = copy->parameters();
  for (size_t k = 0; k < mine.size(); ++k) {
    if (!theirs[k].grad().defined()) continue;
    if (mine[k].grad().defined()) {
      mine[k].mutable_grad().add_(theirs[k].grad());
    } else {
      mine[k].mutable_grad() = theirs[k].grad().clone();
    }
    theirs[k].mutable_grad() = torch::Tensor();
  }
}

void RankModel::step(int first, int last) {
  for (int l = std::max(first, frozen_); l < last; ++l) {
    torch::optim::Optimizer* optimizer = optimizer_of(l);
    if (optimizer == nullptr) continue;
    optimizer->step();
    optimizer->zero_grad();
  }
}

void RankModel::freeze_prefix(int frozen) {
  for (int l = frozen_; l < frozen; ++l) {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      optimizers_.erase(l);
    }
    if (!holds(l)) continue;
    for (auto& p : layer(l).parameters()) {
      p.requires_grad_(false);
      p.mutable_grad() = torch::Tensor();
    }
  }
  frozen_ = std::max(frozen_, frozen);
}

int64_t RankModel::payload_values(const std::vector<int>& layers) {
  int64_t count = 0;
  for (int l : layers) {
    const int copies = 1 + (trains(l) ? state_tensors_per_parameter(kind_) : 0);
    for (const auto& p : stage(l, l + 1)->parameters()) count += copies * p.numel();
  }
  return count;
}

int64_t RankModel::payload_steps(const std::vector<int>& layers) {
  if (kind_ != proto::ADAM) return 0;
  int64_t count = 0;
  for (int l : layers) {
    if (trains(l)) count += static_cast<int64_t>(stage(l, l + 1)->parameters().size());
  }
  return count;
}

RankModel::Payload RankModel::export_layers(const std::vector<int>& layers) {
  std::vector<torch::Tensor> values, steps;
  for (int l : layers) {
    if (!holds(l)) throw std::logic_error("exporting layer " + std::to_string(l) + ", not held");
    for (const auto& p : layer(l).parameters()) values.push_back(p.detach().flatten());
    if (!trains(l)) continue;
    for (const auto& p : layer(l).parameters()) {
      const ParameterState state = parameter_state(trained_optimizer(l), kind_, p);
      for (const auto& t : state.tensors) values.push_back(t.detach().flatten());
      if (kind_ == proto::ADAM) steps.push_back(torch::full({1}, state.step, torch::kLong));
    }
  }
  Payload payload;
  payload.values = values.empty() ? torch::empty({0}) : torch::cat(values);
  payload.steps = steps.empty() ? torch::empty({0}, torch::kLong) : torch::cat(steps);
  return payload;
}

void RankModel::import_layers(const std::vector<int>& layers, const Payload& payload) {
  const torch::NoGradGuard no_grad;
  int64_t offset = 0, step = 0;
  auto take = [&](const torch::Tensor& like) {
    torch::Tensor t = payload.values.slice(0, offset, offset + like.numel()).view_as(like);
    offset += like.numel();
    return t;
  };
  for (int l : layers) {
    held(l);  // builds the layer (and its optimizer if it trains)
    for (auto& p : layer(l).parameters()) p.copy_(take(p));
    if (!trains(l)) continue;
    for (auto& p : layer(l).parameters()) {
      ParameterState state;
      for (int k = 0; k < state_tensors_per_parameter(kind_); ++k) state.tensors.push_back(take(p));
      if (kind_ == proto::ADAM) state.step = payload.steps[step++].item<int64_t>();
      set_parameter_state(trained_optimizer(l), kind_, p, state);
    }
  }
  if (offset != payload.values.numel()) {
    throw std::runtime_error("a migration payload of " + std::to_string(payload.values.numel()) +
                             " values for layers that take " + std::to_string(offset));
  }
}

void RankModel::release_all_but(const std::set<int>& kept) {
  const std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = layers_.begin(); it != layers_.end();) {
    if (kept.count(it->first)) {
      ++it;
      continue;
    }
    optimizers_.erase(it->first);
    it = layers_.erase(it);
  }
}

}  // namespace pipetwin
