#include "backend/torch/zero_shards.h"

#include "backend/torch/optimizers.h"

namespace pipetwin {

ZeroShards::ZeroShards(const std::vector<std::vector<torch::Tensor>>& parameters,
                       proto::Optimizer optimizer, int member, int members)
    : member_(member), members_(members) {
  const torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> owned;
  for (const std::vector<torch::Tensor>& of_layer : parameters) {
    Layer layer;
    std::vector<torch::Tensor> flat;
    for (const auto& p : of_layer) {
      layer.parameters.push_back(p);
      flat.push_back(p.detach().flatten());
    }
    const torch::Tensor whole = flat.empty() ? torch::zeros({0}) : torch::cat(flat);
    layer.size = whole.numel();
    layer.shard = (layer.size + members - 1) / members;
    const torch::Tensor padded = torch::zeros({layer.shard * members}, whole.options());
    padded.slice(0, 0, layer.size).copy_(whole);
    layer.own = padded.slice(0, member * layer.shard, (member + 1) * layer.shard)
                    .clone()
                    .requires_grad_(true);
    layer.own.mutable_grad() = torch::zeros_like(layer.own);
    if (layer.size > 0) owned.push_back(layer.own);
    layers_.push_back(std::move(layer));
  }
  optimizer_ = make_optimizer(optimizer, owned);
}

torch::Tensor ZeroShards::flat_gradient(const Layer& layer) const {
  torch::Tensor padded = torch::zeros({layer.shard * members_}, layer.own.options());
  int64_t offset = 0;
  for (const auto& p : layer.parameters) {
    const int64_t n = p.numel();
    if (p.grad().defined()) padded.slice(0, offset, offset + n).copy_(p.grad().flatten());
    offset += n;
  }
  return padded;
}

void ZeroShards::take_gradients(int32_t pass) {
  const torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> flat;
  for (Layer& layer : layers_) {
    flat.push_back(flat_gradient(layer));
    for (const auto& p : layer.parameters) {
      if (p.grad().defined()) p.mutable_grad().zero_();
    }
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  if (members_ == 1) {  // nothing to scatter: the shard is the whole
    for (size_t l = 0; l < layers_.size(); ++l) layers_[l].own.mutable_grad().add_(flat[l]);
    return;
  }
  taken_[pass] = std::move(flat);
}

void ZeroShards::reduce_scatter(c10d::ProcessGroupGloo& group, int32_t pass) {
  if (pass < 0) take_gradients(pass);  // no backward runs while the update waits for this
  std::vector<torch::Tensor> buffers;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    buffers = std::move(taken_.at(pass));
    taken_.erase(pass);
  }
  const torch::NoGradGuard no_grad;
  const int n = members_;
  for (size_t l = 0; l < layers_.size(); ++l) {
    Layer& layer = layers_[l];
    if (layer.size == 0) continue;  // a layer without weights (an activation)
    const torch::Tensor& buffer = buffers[l];
    const auto chunk = [&](int c) {
      const int k = ((c % n) + n) % n;
      return buffer.slice(0, k * layer.shard, (k + 1) * layer.shard);
    };
    // Step k: send the chunk summed so far, (member - k - 1), to the next member and add the
    // previous member's (member - k - 2) to ours; after n - 1 steps chunk `member` holds the
    // whole group's sum.
    for (int k = 0; k + 1 < n; ++k) {
      std::vector<torch::Tensor> out = {chunk(member_ - k - 1).clone()};
      std::vector<torch::Tensor> in = {torch::empty({layer.shard}, buffer.options())};
      auto sent = group.send(out, (member_ + 1) % n, k);
      group.recv(in, (member_ - 1 + n) % n, k)->wait();
      sent->wait();
      chunk(member_ - k - 2).add_(in[0]);
    }
    layer.own.mutable_grad().add_(chunk(member_));
  }
}

void ZeroShards::step() {
  // A group of one: the gradients accumulated since the last backward taken are its own.
  if (members_ == 1) take_gradients(-1);
  optimizer_->step();
  const std::lock_guard<std::mutex> lock(mutex_);
  for (Layer& layer : layers_) {
    layer.own.mutable_grad().zero_();
    layer.stale = layer.size > 0;
    if (members_ == 1 && layer.stale) {
      const torch::NoGradGuard no_grad;
      write_back(layer, layer.own.detach());
    }
  }
}

void ZeroShards::write_back(Layer& layer, const torch::Tensor& whole) {
  int64_t offset = 0;
  for (auto& p : layer.parameters) {
    const int64_t n = p.numel();
    // Past autograd's version counter: a backward may still hold the tensor it saved.
    p.variable_data().copy_(whole.slice(0, offset, offset + n).view_as(p));
    offset += n;
  }
  layer.stale = false;
}

void ZeroShards::all_gather(c10d::ProcessGroupGloo& group, int first, int last) {
  const torch::NoGradGuard no_grad;
  for (int l = first; l < last; ++l) {
    Layer& layer = layers_[l];
    if (layer.size == 0) continue;
    std::vector<torch::Tensor> input = {layer.own.detach().clone()};
    std::vector<std::vector<torch::Tensor>> output(1);
    for (int m = 0; m < members_; ++m) {
      output[0].push_back(torch::empty({layer.shard}, layer.own.options()));
    }
    group.allgather(output, input)->wait();
    const std::lock_guard<std::mutex> lock(mutex_);
    if (!layer.stale) continue;  // the same values are in place, and a pass may be reading them
    write_back(layer, torch::cat(output[0]));
  }
  gathered_.notify_all();
}

void ZeroShards::wait_gathered() {
  std::unique_lock<std::mutex> lock(mutex_);
  gathered_.wait(lock, [&] {
    for (const Layer& layer : layers_) {
      if (layer.stale) return false;
    }
    return true;
  });
}

}  // namespace pipetwin
