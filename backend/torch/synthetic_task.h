// A synthetic but learnable task: a fixed random teacher network labels random inputs,
// and the student (the pipelined model) learns to imitate it: regression onto the
// teacher's outputs, or classification by the teacher's argmax (per token for a language
// model, whose teacher sees each token). Every rank can produce any iteration's minibatch
// by itself, so no data moves between ranks.
#pragma once

#include <cstdint>
#include <vector>

#include "backend/torch/torch_pch.h"
#include "sim/model/zoo_architecture.h"

namespace pipetwin {

class SyntheticTask {
 public:
  SyntheticTask(const ZooArchitecture& arch, int64_t batch, uint64_t seed);

  // Inputs and targets of iteration `iteration`, the whole minibatch.
  torch::Tensor inputs(int iteration) const;
  torch::Tensor targets(int iteration) const;

 private:
  std::vector<int64_t> input_shape_, output_shape_;
  int64_t vocab_, classes_, batch_;
  uint64_t seed_;
  torch::Tensor teacher_in_, teacher_out_;
};

}  // namespace pipetwin
