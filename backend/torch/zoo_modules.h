// Zoo models as LibTorch modules, one module per scenario layer, so that any contiguous
// range of layers is a pipeline stage. Layer l's weights are drawn from a generator seeded
// by (seed, l): a stage's initial weights do not depend on how the model is cut.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backend/torch/torch_pch.h"
#include "scenario.pb.h"

namespace pipetwin {

// Modules for layers [first, last) of the zoo model.
torch::nn::Sequential zoo_layers(const proto::Zoo& zoo, int first, int last, uint64_t seed);

// Shape of one sample at the input of layer `layer` (layer == count: the model output).
std::vector<int64_t> zoo_sample_shape(const proto::Zoo& zoo, int layer);

int zoo_layer_count(const proto::Zoo& zoo);

// "" when the backend can build this zoo model, else why not.
std::string zoo_unsupported(const proto::Zoo& zoo);

}  // namespace pipetwin
