#include "sim/model/zoo_architecture.h"

#include <algorithm>
#include <cmath>

namespace pipetwin {

const std::vector<int64_t>& vgg16_configuration() {
  static const std::vector<int64_t> kConfig = {64, 64,  0,   128, 128, 0,   256, 256, 256,
                                               0,  512, 512, 512, 0,   512, 512, 512, 0};
  return kConfig;
}

int64_t scaled_width(int64_t width, double scale) {
  return std::max<int64_t>(1, std::llround(static_cast<double>(width) * scale));
}

int resnet_depth(const proto::Zoo& zoo) { return zoo.has_layers() ? zoo.layers() : 18; }

std::vector<int> resnet_blocks(int depth) {
  if (depth == 18) return {2, 2, 2, 2};
  if (depth == 34) return {3, 4, 6, 3};
  return {};
}

namespace {

ZooArchitecture gpt_architecture(const proto::Zoo& zoo) {
  ZooArchitecture a;
  const int64_t h = zoo.hidden(), s = zoo.seq_len();
  a.input_vocab = a.classes = zoo.vocab();
  a.heads = zoo.heads();
  a.seq_len = s;
  a.layers.push_back({ArchKind::kEmbedding, zoo.vocab(), h});
  a.boundary_shapes.push_back({s});
  for (int i = 0; i < zoo.layers(); ++i) {
    a.layers.push_back({ArchKind::kTransformerBlock, h, h});
    a.boundary_shapes.push_back({s, h});
  }
  a.layers.push_back({ArchKind::kLmHead, h, zoo.vocab()});
  a.boundary_shapes.push_back({s, h});
  a.boundary_shapes.push_back({s, zoo.vocab()});
  return a;
}

// The transformer as its layers: embedding, one layer per block, head, as the cost model
// (zoo_transformer.cpp) cuts it.
ZooArchitecture transformer(const proto::Zoo& zoo) {
  ZooArchitecture a;
  a.transformer = transformer_shape(zoo);
  const TransformerShape& t = a.transformer;
  a.input_vocab = a.classes = t.vocab;
  a.heads = t.heads;
  a.seq_len = t.seq_len;
  a.layers.push_back({ArchKind::kDecoderEmbedding, t.vocab, t.hidden});
  a.boundary_shapes.push_back({t.seq_len});
  for (int64_t b = 0; b < t.layers; ++b) {
    ArchLayer block{ArchKind::kDecoderBlock, t.hidden, t.hidden};
    block.block = b;
    a.layers.push_back(block);
    a.boundary_shapes.push_back({t.seq_len, t.hidden});
  }
  a.layers.push_back({ArchKind::kDecoderHead, t.hidden, t.vocab});
  a.boundary_shapes.push_back({t.seq_len, t.hidden});
  a.boundary_shapes.push_back({t.seq_len, t.vocab});
  return a;
}

ZooArchitecture vgg16_architecture(const proto::Zoo& zoo) {
  ZooArchitecture a;
  a.classes = zoo.num_classes();
  int64_t channels = 3, size = zoo.image_size();
  for (int64_t out : vgg16_configuration()) {
    a.boundary_shapes.push_back({channels, size, size});
    if (out == 0) {
      a.layers.push_back({ArchKind::kMaxPool2, channels, channels});
      size /= 2;
      continue;
    }
    out = scaled_width(out, zoo.width_scale());
    a.layers.push_back({ArchKind::kConv3x3, channels, out, /*relu=*/true});
    channels = out;
  }
  const int64_t fc = scaled_width(4096, zoo.width_scale());
  const int64_t dims[] = {channels * size * size, fc, fc, zoo.num_classes()};
  a.boundary_shapes.push_back({channels, size, size});
  for (int i = 0; i < 3; ++i) {
    a.layers.push_back({ArchKind::kLinear, dims[i], dims[i + 1], i < 2, i == 0});
    a.boundary_shapes.push_back({dims[i + 1]});
  }
  return a;
}

ZooArchitecture mlp_architecture(const proto::Zoo& zoo) {
  ZooArchitecture a;
  const int n = zoo.layers();
  auto width = [&](int boundary) -> int64_t {
    if (boundary == 0) return zoo.input_dim();
    return boundary == n ? zoo.output_dim() : zoo.hidden();
  };
  for (int l = 0; l <= n; ++l) a.boundary_shapes.push_back({width(l)});
  for (int l = 0; l < n; ++l)
    a.layers.push_back({ArchKind::kLinear, width(l), width(l + 1), l + 1 < n});
  return a;
}

// ResNet with BasicBlocks (He et al. 2016): a stem, four stages of 64, 128, 256, 512
// channels (times width_scale) whose first block (stages 2-4) halves the size, a head.
ZooArchitecture resnet_architecture(const proto::Zoo& zoo) {
  ZooArchitecture a;
  a.classes = zoo.num_classes();
  const bool cifar = zoo.image_size() <= kResnetCifarMaxImage;
  int64_t channels = scaled_width(64, zoo.width_scale()), size = zoo.image_size();
  a.boundary_shapes.push_back({3, size, size});
  a.layers.push_back({ArchKind::kResnetStem, 3, channels, true, false, cifar ? 1 : 2});
  if (!cifar) size /= 4;  // the 7x7 conv's stride and the max pool's
  const std::vector<int> blocks = resnet_blocks(resnet_depth(zoo));
  for (size_t stage = 0; stage < blocks.size(); ++stage) {
    const int64_t out = scaled_width(int64_t{64} << stage, zoo.width_scale());
    for (int b = 0; b < blocks[stage]; ++b) {
      const int64_t stride = stage > 0 && b == 0 ? 2 : 1;
      a.boundary_shapes.push_back({channels, size, size});
      a.layers.push_back({ArchKind::kBasicBlock, channels, out, true, false, stride});
      channels = out;
      size /= stride;
    }
  }
  a.boundary_shapes.push_back({channels, size, size});
  a.layers.push_back({ArchKind::kPoolLinear, channels, zoo.num_classes()});
  a.boundary_shapes.push_back({zoo.num_classes()});
  return a;
}

}  // namespace

ZooArchitecture zoo_architecture(const proto::Zoo& zoo) {
  if (zoo.name() == "gpt") return gpt_architecture(zoo);
  if (zoo.name() == "vgg16") return vgg16_architecture(zoo);
  if (zoo.name() == "resnet") return resnet_architecture(zoo);
  if (zoo.name() == "mlp") return mlp_architecture(zoo);
  if (zoo.name() == "transformer") return transformer(zoo);
  throw std::invalid_argument("no architecture for the zoo model '" + zoo.name() + "'");
}

}  // namespace pipetwin
