#include "backend/torch/zoo_modules.h"

#include <cmath>

#include "backend/torch/decoder_layers.h"
#include "backend/torch/tensor_parallel_layers.h"

namespace pipetwin {
namespace {

// A linear map, flattening an image first and ending in ReLU where the model has one.
struct DenseLayerImpl : torch::nn::Module {
  explicit DenseLayerImpl(const ArchLayer& layer)
      : linear(register_module("linear", torch::nn::Linear(layer.in, layer.out))),
        relu(layer.relu),
        flatten(layer.flatten) {}
  torch::Tensor forward(torch::Tensor x) {
    if (flatten) x = x.flatten(1);
    x = linear(x);
    return relu ? torch::relu(x) : x;
  }
  torch::nn::Linear linear;
  bool relu, flatten;
};
TORCH_MODULE(DenseLayer);

struct ConvLayerImpl : torch::nn::Module {
  explicit ConvLayerImpl(const ArchLayer& layer)
      : conv(register_module(
            "conv",
            torch::nn::Conv2d(torch::nn::Conv2dOptions(layer.in, layer.out, 3).padding(1)))) {
    // torchvision's VGG initialisation: without it (and without batch norm) the signal
    // fades through thirteen convolutions and the network barely trains.
    torch::nn::init::kaiming_normal_(conv->weight, 0, torch::kFanOut, torch::kReLU);
    torch::nn::init::zeros_(conv->bias);
  }
  torch::Tensor forward(torch::Tensor x) { return torch::relu(conv(x)); }
  torch::nn::Conv2d conv;
};
TORCH_MODULE(ConvLayer);

struct PoolLayerImpl : torch::nn::Module {
  torch::Tensor forward(torch::Tensor x) { return torch::max_pool2d(x, 2); }
};
TORCH_MODULE(PoolLayer);

// Token ids [B, S] -> token + learned position embeddings [B, S, H].
struct EmbeddingLayerImpl : torch::nn::Module {
  EmbeddingLayerImpl(int64_t vocab, int64_t seq_len, int64_t hidden)
      : tokens(register_module("tokens", torch::nn::Embedding(vocab, hidden))),
        positions(register_module("positions", torch::nn::Embedding(seq_len, hidden))) {}
  torch::Tensor forward(torch::Tensor ids) {
    const torch::Tensor where = torch::arange(ids.size(1), torch::kLong);
    return tokens(ids) + positions(where).unsqueeze(0);
  }
  torch::nn::Embedding tokens, positions;
};
TORCH_MODULE(EmbeddingLayer);

// GPT-2 style block: x + attention(ln1(x)), then x + mlp(ln2(x)); causal attention over
// `heads` heads, a 4H GELU MLP. 12H^2 + 13H parameters, as the cost model counts.
struct TransformerBlockImpl : torch::nn::Module {
  TransformerBlockImpl(int64_t hidden, int64_t heads)
      : heads(heads),
        ln1(register_module("ln1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({hidden})))),
        qkv(register_module("qkv", torch::nn::Linear(hidden, 3 * hidden))),
        proj(register_module("proj", torch::nn::Linear(hidden, hidden))),
        ln2(register_module("ln2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({hidden})))),
        up(register_module("up", torch::nn::Linear(hidden, 4 * hidden))),
        down(register_module("down", torch::nn::Linear(4 * hidden, hidden))) {}

  torch::Tensor forward(torch::Tensor x) {
    const int64_t b = x.size(0), s = x.size(1), h = x.size(2), d = h / heads;
    // [B, S, 3H] -> three [B, heads, S, d]
    const auto parts = qkv(ln1(x)).view({b, s, 3, heads, d}).permute({2, 0, 3, 1, 4}).unbind(0);
    torch::Tensor scores = parts[0].matmul(parts[1].transpose(-2, -1)) / std::sqrt(double(d));
    const torch::Tensor future = torch::ones({s, s}, torch::kBool).triu(1);
    scores = scores.masked_fill(future, -std::numeric_limits<float>::infinity());
    const torch::Tensor attended =
        torch::softmax(scores, -1).matmul(parts[2]).transpose(1, 2).reshape({b, s, h});
    x = x + proj(attended);
    return x + down(torch::gelu(up(ln2(x))));
  }

  int64_t heads;
  torch::nn::LayerNorm ln1;
  torch::nn::Linear qkv, proj;
  torch::nn::LayerNorm ln2;
  torch::nn::Linear up, down;
};
TORCH_MODULE(TransformerBlock);

// Final layernorm and untied logits [B, S, H] -> [B, S, V].
struct LmHeadImpl : torch::nn::Module {
  LmHeadImpl(int64_t hidden, int64_t vocab)
      : norm(register_module("norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({hidden})))),
        logits(register_module(
            "logits", torch::nn::Linear(torch::nn::LinearOptions(hidden, vocab).bias(false)))) {}
  torch::Tensor forward(torch::Tensor x) { return logits(norm(x)); }
  torch::nn::LayerNorm norm;
  torch::nn::Linear logits;
};
TORCH_MODULE(LmHead);

// ResNet (He et al. 2016), as torchvision builds it: convolutions without bias, each
// followed by a BatchNorm (weight 1, bias 0); torchvision's Kaiming initialisation. The
// BatchNorms normalise over the microbatch in training mode; the single-process reference
// (reference_training.cpp) runs the same microbatches, so the pipeline still equals it.
// Their running statistics are buffers: not parameters, not trained, not costed.
torch::nn::Conv2d resnet_conv(int64_t in, int64_t out, int64_t kernel, int64_t stride) {
  torch::nn::Conv2d conv(
      torch::nn::Conv2dOptions(in, out, kernel).stride(stride).padding(kernel / 2).bias(false));
  torch::nn::init::kaiming_normal_(conv->weight, 0, torch::kFanOut, torch::kReLU);
  return conv;
}

// stride 1: the CIFAR stem (3x3 conv, BN, ReLU); stride 2: ImageNet's (7x7 conv stride 2,
// BN, ReLU, 3x3 max pool stride 2).
struct ResnetStemImpl : torch::nn::Module {
  explicit ResnetStemImpl(const ArchLayer& layer)
      : pool(layer.stride > 1),
        conv(register_module("conv", resnet_conv(layer.in, layer.out, pool ? 7 : 3, pool ? 2 : 1))),
        bn(register_module("bn", torch::nn::BatchNorm2d(layer.out))) {}
  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(bn(conv(x)));
    return pool ? torch::max_pool2d(x, 3, 2, 1) : x;
  }
  bool pool;
  torch::nn::Conv2d conv;
  torch::nn::BatchNorm2d bn;
};
TORCH_MODULE(ResnetStem);

// conv3x3(stride)-BN-ReLU-conv3x3-BN, plus the shortcut (1x1 conv(stride)-BN when the
// shape changes), add, ReLU.
struct BasicBlockImpl : torch::nn::Module {
  explicit BasicBlockImpl(const ArchLayer& layer)
      : conv1(register_module("conv1", resnet_conv(layer.in, layer.out, 3, layer.stride))),
        bn1(register_module("bn1", torch::nn::BatchNorm2d(layer.out))),
        conv2(register_module("conv2", resnet_conv(layer.out, layer.out, 3, 1))),
        bn2(register_module("bn2", torch::nn::BatchNorm2d(layer.out))) {
    if (layer.stride != 1 || layer.in != layer.out) {
      shortcut_conv =
          register_module("shortcut_conv", resnet_conv(layer.in, layer.out, 1, layer.stride));
      shortcut_bn = register_module("shortcut_bn", torch::nn::BatchNorm2d(layer.out));
    }
  }
  torch::Tensor forward(torch::Tensor x) {
    const torch::Tensor y = bn2(conv2(torch::relu(bn1(conv1(x)))));
    const torch::Tensor shortcut = shortcut_conv ? shortcut_bn(shortcut_conv(x)) : x;
    return torch::relu(y + shortcut);
  }
  torch::nn::Conv2d conv1;
  torch::nn::BatchNorm2d bn1;
  torch::nn::Conv2d conv2;
  torch::nn::BatchNorm2d bn2;
  torch::nn::Conv2d shortcut_conv{nullptr};
  torch::nn::BatchNorm2d shortcut_bn{nullptr};
};
TORCH_MODULE(BasicBlock);

// Global average pool [B, C, H, W] -> [B, C], then the classifier.
struct PoolLinearImpl : torch::nn::Module {
  explicit PoolLinearImpl(const ArchLayer& layer)
      : fc(register_module("fc", torch::nn::Linear(layer.in, layer.out))) {}
  torch::Tensor forward(torch::Tensor x) { return fc(x.mean({2, 3})); }
  torch::nn::Linear fc;
};
TORCH_MODULE(PoolLinear);

// A transformer's layers split themselves (decoder_layers.h); the others are built whole.
bool splits_itself(const ArchLayer& layer) {
  return layer.kind == ArchKind::kDecoderEmbedding || layer.kind == ArchKind::kDecoderBlock ||
         layer.kind == ArchKind::kDecoderHead;
}

torch::nn::AnyModule make_layer(const ZooArchitecture& arch, const ArchLayer& layer,
                                const ExpertParallelGroup& expert_parallel,
                                const TensorParallelGroup& tensor_parallel) {
  switch (layer.kind) {
    case ArchKind::kLinear:
      return torch::nn::AnyModule(DenseLayer(layer));
    case ArchKind::kConv3x3:
      return torch::nn::AnyModule(ConvLayer(layer));
    case ArchKind::kMaxPool2:
      return torch::nn::AnyModule(PoolLayer());
    case ArchKind::kEmbedding:
      return torch::nn::AnyModule(EmbeddingLayer(layer.in, arch.seq_len, layer.out));
    case ArchKind::kTransformerBlock:
      return torch::nn::AnyModule(TransformerBlock(layer.in, arch.heads));
    case ArchKind::kLmHead:
      return torch::nn::AnyModule(LmHead(layer.in, layer.out));
    case ArchKind::kResnetStem:
      return torch::nn::AnyModule(ResnetStem(layer));
    case ArchKind::kBasicBlock:
      return torch::nn::AnyModule(BasicBlock(layer));
    case ArchKind::kPoolLinear:
      return torch::nn::AnyModule(PoolLinear(layer));
    case ArchKind::kDecoderEmbedding:
    case ArchKind::kDecoderBlock:
    case ArchKind::kDecoderHead:
      return make_decoder_layer(arch, layer, expert_parallel, tensor_parallel);
  }
  throw std::logic_error("unknown architecture layer");
}

}  // namespace

torch::nn::Sequential zoo_layers(const ZooArchitecture& arch, int first, int last, uint64_t seed,
                                 const TensorParallelGroup& tensor_parallel,
                                 const ExpertParallelGroup& expert_parallel) {
  torch::nn::Sequential stage;
  for (int l = first; l < last; ++l) {
    // Seeded per layer, so that the cut does not change the initial weights.
    torch::manual_seed(seed * 1000003 + l);
    const ArchLayer& layer = arch.layers[l];
    torch::nn::AnyModule built = make_layer(arch, layer, expert_parallel, tensor_parallel);
    stage->push_back(tensor_parallel.splits() && !splits_itself(layer)
                         ? split_layer(arch, l, *built.ptr(), tensor_parallel)
                         : built);
  }
  return stage;
}

torch::Tensor zoo_loss(const ZooArchitecture& arch, const torch::Tensor& output,
                       const torch::Tensor& target) {
  if (arch.classes == 0) return torch::mse_loss(output, target);
  return torch::cross_entropy_loss(output.reshape({-1, arch.classes}), target.reshape({-1}));
}

double parameter_sum(torch::nn::Module& layer) {
  double sum = 0;
  for (const auto& p : layer.parameters()) sum += p.sum().item<double>();
  return sum;
}

}  // namespace pipetwin
