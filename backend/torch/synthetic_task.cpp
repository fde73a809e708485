#include "backend/torch/synthetic_task.h"

namespace pipetwin {
namespace {

int64_t numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// What the teacher sees of a float input: images through a 4x4 average pool (their
// blobs; labels that hang on pixel noise would take a CNN thousands of steps to learn),
// anything else as it is. Flattened per sample.
torch::Tensor teacher_view(const torch::Tensor& x) {
  if (x.dim() == 4) return torch::adaptive_avg_pool2d(x, {2, 2}).flatten(1);
  return x.flatten(1);
}

}  // namespace

SyntheticTask::SyntheticTask(const ZooArchitecture& arch, int64_t batch, uint64_t seed)
    : input_shape_(arch.boundary_shapes.front()),
      output_shape_(arch.boundary_shapes.back()),
      vocab_(arch.input_vocab),
      classes_(arch.classes),
      batch_(batch),
      seed_(seed) {
  // Teacher: a fixed two-layer tanh network. It reads the flattened input, or for token
  // inputs each token through its own random embedding.
  auto generator = at::detail::createCPUGenerator(seed_ * 7919 + 17);
  const int64_t width = 64;
  const int64_t in =
      vocab_ > 0 ? vocab_ : numel(teacher_view(torch::zeros(batched_shape(1, input_shape_))));
  const int64_t out = classes_ > 0 ? classes_ : numel(output_shape_);
  teacher_in_ =
      at::randn({in, width}, generator) / std::sqrt(static_cast<double>(vocab_ > 0 ? 1 : in));
  teacher_out_ = at::randn({width, out}, generator) / std::sqrt(static_cast<double>(width));
}

torch::Tensor SyntheticTask::inputs(int iteration) const {
  auto generator = at::detail::createCPUGenerator(seed_ * 104729 + iteration);
  if (vocab_ > 0) return at::randint(vocab_, batched_shape(batch_, input_shape_), generator);
  if (input_shape_.size() == 3) {
    // Images: 4x4 blobs of colour, blown up to full size, plus a little pixel noise.
    const torch::Tensor blobs = at::randn({batch_, input_shape_[0], 4, 4}, generator);
    const torch::Tensor noise = at::randn(batched_shape(batch_, input_shape_), generator);
    return torch::upsample_nearest2d(blobs, {input_shape_[1], input_shape_[2]}) + 0.1 * noise;
  }
  return at::randn(batched_shape(batch_, input_shape_), generator);
}

torch::Tensor SyntheticTask::targets(int iteration) const {
  const torch::NoGradGuard no_grad;
  const torch::Tensor x = inputs(iteration);
  // Hidden features: [B, width], or [B, S, width] per token.
  const torch::Tensor hidden = vocab_ > 0 ? torch::tanh(teacher_in_.index({x}))
                                          : torch::tanh(teacher_view(x).matmul(teacher_in_));
  const torch::Tensor scores = hidden.matmul(teacher_out_);
  if (classes_ > 0) return scores.argmax(-1);  // [B] or [B, S] class ids
  return scores.reshape(batched_shape(batch_, output_shape_));
}

}  // namespace pipetwin
