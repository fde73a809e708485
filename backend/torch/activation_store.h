// What a rank's instructions leave for later ones: each FWD's stash (the tensors its
// backward needs, until every one of its samples has been through a BWD) and each
// instruction's product (FWD: its output; BWD: its input gradient; RECV: its payload), with
// the bytes of activations each FWD kept, as measured. Indexed by instruction.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "backend/torch/torch_pch.h"
#include "sim/spec/sample_range.h"

namespace pipetwin {

struct Stash {
  torch::Tensor input, output;
  int32_t rows_left = 0;
  // Asynchronous pipelines: the weight version the forward ran with, kept until its
  // backward (weight stashing, weight_stash.h).
  std::shared_ptr<torch::nn::Sequential> weights;
  // A split backward: what BWD_INPUT back-propagated from (the output, or on the last
  // stage the loss) and with which gradient, kept with the graph until BWD_WEIGHT.
  torch::Tensor root, root_grad;
};

class ActivationStore {
 public:
  explicit ActivationStore(int32_t instructions)
      : stash_(instructions), produced_(instructions), stash_bytes_(instructions, 0) {}

  Stash& stash(int32_t i) { return stash_[i]; }
  torch::Tensor& produced(int32_t i) { return produced_[i]; }
  int64_t& stash_bytes(int32_t i) { return stash_bytes_[i]; }
  int64_t stash_bytes(int32_t i) const { return stash_bytes_[i]; }

  // Forward f's stash and output go: its backward is done, and so are its sends (a
  // gradient came back).
  void release(int32_t f) {
    stash_[f] = Stash{};
    produced_[f] = torch::Tensor();
  }

  // The rows of `source` (which holds samples [from.lo, from.hi)) for samples `want`.
  static torch::Tensor rows(const torch::Tensor& source, SampleRange from, SampleRange want) {
    return source.slice(0, want.lo - from.lo, want.hi - from.lo);
  }

 private:
  std::vector<Stash> stash_;
  std::vector<torch::Tensor> produced_;
  std::vector<int64_t> stash_bytes_;
};

}  // namespace pipetwin
