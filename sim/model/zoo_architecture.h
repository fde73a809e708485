// A zoo model as an architecture rather than costs: the kind and size of every scenario
// layer and the per-sample shape crossing each layer boundary. The LibTorch backend builds
// its modules from it, so the model that runs is the model the simulators cost. Torch-free;
// assumes a zoo that model_from_zoo accepted.
#pragma once

#include <cstdint>
#include <vector>

#include "scenario.pb.h"
#include "sim/model/transformer_shape.h"

namespace pipetwin {

enum class ArchKind {
  kLinear,            // in -> out features, flattening [C, H, W] first when `flatten`
  kConv3x3,           // in -> out channels, stride 1, padding 1
  kMaxPool2,          // 2x2 max pool, stride 2
  kEmbedding,         // token + position embedding: ids [S] -> [S, H]
  kTransformerBlock,  // pre-layernorm causal self-attention + 4H MLP, residuals
  kLmHead,            // final layernorm + logits [S, H] -> [S, V], no bias
  // ResNet (BasicBlock). Convolutions have no bias: each is followed by a BatchNorm.
  kResnetStem,  // stride 1: 3x3 conv, BN, ReLU (CIFAR); stride 2: 7x7 conv stride 2, BN,
                // ReLU, 3x3 max pool stride 2 (ImageNet)
  kBasicBlock,  // conv3x3(stride)-BN-ReLU-conv3x3-BN + shortcut, add, ReLU; the shortcut is
                // a 1x1 conv(stride) + BN when stride > 1 or in != out, else the identity
  kPoolLinear,  // global average pool [C, H, W] -> [C], then linear C -> classes
  // The zoo's "transformer" (ZooArchitecture::transformer holds its shape):
  kDecoderEmbedding,  // token embedding only (rotary positions live in the attention)
  kDecoderBlock,      // pre-norm grouped-query attention with RoPE, then a dense or MoE MLP
  kDecoderHead,       // final norm + logits [S, H] -> [S, V], no bias
};

struct ArchLayer {
  ArchKind kind = ArchKind::kLinear;
  int64_t in = 0;  // features or channels (gpt: hidden)
  int64_t out = 0;
  bool relu = false;
  bool flatten = false;
  int64_t stride = 1;  // kResnetStem, kBasicBlock
  int64_t block = -1;  // kDecoderBlock: which block of the model (MoE from first_dense_layers)
};

struct ZooArchitecture {
  std::vector<ArchLayer> layers;
  // Per-sample shape at the input of layer l; the last entry is the model output.
  std::vector<std::vector<int64_t>> boundary_shapes;
  int64_t input_vocab = 0;  // > 0: inputs are token ids below this
  int64_t classes = 0;      // > 0: targets are class ids (the output's last dim); 0: regression
  int64_t heads = 0;        // gpt
  int64_t seq_len = 0;      // gpt, transformer
  TransformerShape transformer;  // transformer: the whole shape (layers > 0)
};

ZooArchitecture zoo_architecture(const proto::Zoo& zoo);

// A boundary shape with the batch dimension in front: the shape of `batch` samples.
inline std::vector<int64_t> batched_shape(int64_t batch, const std::vector<int64_t>& shape) {
  std::vector<int64_t> out = {batch};
  out.insert(out.end(), shape.begin(), shape.end());
  return out;
}

// VGG-16 configuration D: output channels of each layer, 0 for a 2x2 max pool.
const std::vector<int64_t>& vgg16_configuration();
// A width (channels, or VGG's classifier 4096) scaled by model.zoo.width_scale: rounded,
// at least 1.
int64_t scaled_width(int64_t width, double scale);

// ResNet: the depth model.zoo.layers asks for (18 when unset), and the BasicBlocks of each
// of its four stages ({2,2,2,2} for 18, {3,4,6,3} for 34; empty for any other depth).
int resnet_depth(const proto::Zoo& zoo);
std::vector<int> resnet_blocks(int depth);
// Images up to this size get the CIFAR stem (no downsampling), larger ones ImageNet's.
constexpr int64_t kResnetCifarMaxImage = 64;  // zoo.cpp's image_size error says 64

}  // namespace pipetwin
