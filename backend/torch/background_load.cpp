#include "backend/torch/background_load.h"

namespace pipetwin {

BackgroundLoad::BackgroundLoad(int threads) {
  for (int t = 0; t < threads; ++t) {
    threads_.emplace_back([this] {
      // Products of a size a layer of the CPU scenarios computes: milliseconds each, so
      // that stopping is prompt.
      const torch::NoGradGuard no_grad;
      const torch::Tensor a = torch::rand({192, 192});
      torch::Tensor b = torch::rand({192, 192});
      while (!stop_.load(std::memory_order_relaxed)) b = torch::tanh(torch::mm(a, b));
    });
  }
}

BackgroundLoad::~BackgroundLoad() {
  stop_ = true;
  for (std::thread& t : threads_) t.join();
}

}  // namespace pipetwin
