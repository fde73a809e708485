#include "backend/torch/layer_profiler.h"

#include <algorithm>
#include <chrono>

#include "backend/torch/background_load.h"
#include "backend/torch/optimizers.h"
#include "backend/torch/torch_pch.h"
#include "backend/torch/zoo_modules.h"
#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// A random input of layer `layer`: token ids for an embedding, else activations that
// take a gradient, as they do inside a pipeline.
torch::Tensor random_input(const ZooArchitecture& arch, int layer, int64_t batch) {
  const std::vector<int64_t> shape = batched_shape(batch, arch.boundary_shapes[layer]);
  if (layer == 0 && arch.input_vocab > 0) return torch::randint(arch.input_vocab, shape);
  return torch::randn(shape).requires_grad_();
}

}  // namespace

std::vector<LayerProfile> profile_layers(const ResolvedScenario& setup,
                                         const std::vector<int>& batches, int warmup, int repeats,
                                         int load_threads) {
  if (!setup.zoo) throw InputError("pipetwin profile measures zoo models (model.zoo)");
  torch::set_num_threads(1);  // as each rank runs
  const BackgroundLoad load(load_threads);
  const ZooArchitecture arch = zoo_architecture(*setup.zoo);
  std::vector<LayerProfile> profiles;
  for (int l = 0; l < static_cast<int>(arch.layers.size()); ++l) {
    torch::nn::Sequential layer = zoo_layers(arch, l, l + 1, 1);
    LayerProfile profile;
    profile.name = setup.model.layers[l].name;
    for (const auto& p : layer->parameters())
      profile.parameter_bytes += p.numel() * p.element_size();
    int64_t out_elements = 1;
    for (int64_t d : arch.boundary_shapes[l + 1]) out_elements *= d;
    profile.activation_bytes_per_sample = out_elements * static_cast<int64_t>(sizeof(float));
    for (int b : batches) {
      std::vector<double> fwd, bwd;
      for (int k = 0; k < warmup + repeats; ++k) {
        const torch::Tensor x = random_input(arch, l, b);
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
    if (layer->parameters().empty()) {  // a pool has nothing to update
      profiles.push_back(std::move(profile));
      continue;
    }
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
