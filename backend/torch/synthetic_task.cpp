#include "backend/torch/synthetic_task.h"

namespace pipetwin {
namespace {

int64_t numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::vector<int64_t> batched(int64_t batch, const std::vector<int64_t>& shape) {
  std::vector<int64_t> out = {batch};
  out.insert(out.end(), shape.begin(), shape.end());
  return out;
}

}  // namespace

SyntheticTask::SyntheticTask(std::vector<int64_t> input_shape, std::vector<int64_t> output_shape,
                             int64_t batch, uint64_t seed)
    : input_shape_(std::move(input_shape)),
      output_shape_(std::move(output_shape)),
      batch_(batch),
      seed_(seed) {
  // Teacher: a fixed two-layer tanh network, flattened in and out.
  auto generator = at::detail::createCPUGenerator(seed_ * 7919 + 17);
  const int64_t in = numel(input_shape_), out = numel(output_shape_), width = 64;
  teacher_in_ = at::randn({in, width}, generator) / std::sqrt(static_cast<double>(in));
  teacher_out_ = at::randn({width, out}, generator) / std::sqrt(static_cast<double>(width));
}

torch::Tensor SyntheticTask::inputs(int iteration) const {
  auto generator = at::detail::createCPUGenerator(seed_ * 104729 + iteration);
  return at::randn(batched(batch_, input_shape_), generator);
}

torch::Tensor SyntheticTask::targets(int iteration) const {
  const torch::NoGradGuard no_grad;
  const torch::Tensor x = inputs(iteration).reshape({batch_, -1});
  return torch::tanh(x.matmul(teacher_in_))
      .matmul(teacher_out_)
      .reshape(batched(batch_, output_shape_));
}

}  // namespace pipetwin
