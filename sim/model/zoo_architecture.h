// A zoo model as an architecture rather than costs: the kind and size of every scenario
// layer and the per-sample shape crossing each layer boundary. The LibTorch backend builds
// its modules from it, so the model that runs is the model the simulators cost. Torch-free;
// assumes a zoo that model_from_zoo accepted.
#pragma once

#include <cstdint>
#include <vector>

#include "scenario.pb.h"

namespace pipetwin {

enum class ArchKind {
  kLinear,            // in -> out features, flattening [C, H, W] first when `flatten`
  kConv3x3,           // in -> out channels, stride 1, padding 1
  kMaxPool2,          // 2x2 max pool, stride 2
  kEmbedding,         // token + position embedding: ids [S] -> [S, H]
  kTransformerBlock,  // pre-layernorm causal self-attention + 4H MLP, residuals
  kLmHead,            // final layernorm + logits [S, H] -> [S, V], no bias
};

struct ArchLayer {
  ArchKind kind = ArchKind::kLinear;
  int64_t in = 0;  // features or channels (gpt: hidden)
  int64_t out = 0;
  bool relu = false;
  bool flatten = false;
};

struct ZooArchitecture {
  std::vector<ArchLayer> layers;
  // Per-sample shape at the input of layer l; the last entry is the model output.
  std::vector<std::vector<int64_t>> boundary_shapes;
  int64_t input_vocab = 0;  // > 0: inputs are token ids below this
  int64_t classes = 0;      // > 0: targets are class ids (the output's last dim); 0: regression
  int64_t heads = 0;        // gpt
  int64_t seq_len = 0;      // gpt
};

ZooArchitecture zoo_architecture(const proto::Zoo& zoo);

// VGG-16 configuration D: output channels of each layer, 0 for a 2x2 max pool.
const std::vector<int64_t>& vgg16_configuration();
// A VGG width (channels, or the classifier's 4096) scaled by model.zoo.width_scale.
int64_t vgg16_width(int64_t width, double scale);

}  // namespace pipetwin
