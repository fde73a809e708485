#include "backend/torch/layer_profiler.h"

#include <algorithm>
#include <chrono>

#include "backend/torch/optimizers.h"
#include "backend/torch/torch_pch.h"
#include "backend/torch/zoo_modules.h"
#include "sim/errors.h"

namespace pipetwin {
namespace {

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::vector<int64_t> batched(int64_t batch, const std::vector<int64_t>& shape) {
  std::vector<int64_t> out = {batch};
  out.insert(out.end(), shape.begin(), shape.end());
  return out;
}

}  // namespace

std::vector<LayerProfile> profile_layers(const ResolvedScenario& setup,
                                         const std::vector<int>& batches, int warmup, int repeats) {
  if (!setup.zoo) throw InputError("pipetwin profile measures zoo models (model.zoo)");
  if (const std::string why = zoo_unsupported(*setup.zoo); !why.empty()) throw InputError(why);
  torch::set_num_threads(1);  // as each rank runs
  const proto::Zoo& zoo = *setup.zoo;
  std::vector<LayerProfile> profiles;
  for (int l = 0; l < zoo_layer_count(zoo); ++l) {
    torch::nn::Sequential layer = zoo_layers(zoo, l, l + 1, 1);
    LayerProfile profile;
    profile.name = setup.model.layers[l].name;
    for (const auto& p : layer->parameters())
      profile.parameter_bytes += p.numel() * p.element_size();
    int64_t out_elements = 1;
    for (int64_t d : zoo_sample_shape(zoo, l + 1)) out_elements *= d;
    profile.activation_bytes_per_sample = out_elements * static_cast<int64_t>(sizeof(float));
    for (int b : batches) {
      std::vector<double> fwd, bwd;
      for (int k = 0; k < warmup + repeats; ++k) {
        const torch::Tensor x = torch::randn(batched(b, zoo_sample_shape(zoo, l))).requires_grad_();
        auto start = std::chrono::steady_clock::now();
        const torch::Tensor y = layer->forward(x);
        const double f = seconds_since(start);
        const torch::Tensor grad = torch::ones_like(y);
        start = std::chrono::steady_clock::now();
        y.backward(grad);
        const double g = seconds_since(start);
        if (k >= warmup) {
          fwd.push_back(f);
          bwd.push_back(g);
        }
      }
      profile.fwd_s.emplace_back(b, median(fwd));
      profile.bwd_s.emplace_back(b, median(bwd));
    }
    // The optimizer step, with the gradients the passes above left behind.
    auto optimizer = make_optimizer(setup.training.optimizer, layer->parameters());
    std::vector<double> steps;
    for (int k = 0; k < warmup + repeats; ++k) {
      const auto start = std::chrono::steady_clock::now();
      optimizer->step();
      if (k >= warmup) steps.push_back(seconds_since(start));
    }
    profile.optim_s = median(steps);
    profiles.push_back(std::move(profile));
  }
  return profiles;
}

}  // namespace pipetwin
