// A synthetic but learnable task: a fixed random teacher network labels random inputs,
// and the student (the pipelined model) regresses onto it. Every rank can produce any
// iteration's minibatch by itself, so no data moves between ranks.
#pragma once

#include <cstdint>
#include <vector>

#include "backend/torch/torch_pch.h"

namespace pipetwin {

class SyntheticTask {
 public:
  SyntheticTask(std::vector<int64_t> input_shape, std::vector<int64_t> output_shape, int64_t batch,
                uint64_t seed);

  // Inputs and targets of iteration `iteration`, the whole minibatch.
  torch::Tensor inputs(int iteration) const;
  torch::Tensor targets(int iteration) const;

 private:
  std::vector<int64_t> input_shape_, output_shape_;
  int64_t batch_;
  uint64_t seed_;
  torch::Tensor teacher_in_, teacher_out_;
};

}  // namespace pipetwin
