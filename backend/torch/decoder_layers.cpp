#include "backend/torch/decoder_layers.h"

#include <cmath>
#include <limits>
#include <string>

#include "backend/torch/moe_mlp.h"

namespace pipetwin {
namespace {

// RoPE's base frequency (Su et al. 2021; Llama 2). The shapes carry no rope_theta: the
// cost is the same for any base, and so is the test of equality with the reference.
constexpr double kRopeTheta = 10000;
constexpr double kNormEpsilon = 1e-5;

torch::nn::Linear linear(int64_t in, int64_t out, bool bias) {
  return torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(bias));
}

// RMSNorm (Zhang and Sennrich 2019): a weight, no bias; or LayerNorm with both.
struct NormImpl : torch::nn::Module {
  NormImpl(int64_t hidden, bool rms) {
    if (rms) {
      weight = register_parameter("weight", torch::ones({hidden}));
    } else {
      layer_norm = register_module("layer_norm",
                                   torch::nn::LayerNorm(torch::nn::LayerNormOptions({hidden})));
    }
  }
  torch::Tensor forward(const torch::Tensor& x) {
    if (layer_norm) return layer_norm(x);
    return x * torch::rsqrt(x.pow(2).mean(-1, true) + kNormEpsilon) * weight;
  }
  torch::Tensor weight;
  torch::nn::LayerNorm layer_norm{nullptr};
};
TORCH_MODULE(Norm);

// Rotates each head's pairs (i, i + d/2) by position-dependent angles: [B, heads, S, d].
torch::Tensor rotary(const torch::Tensor& x) {
  const int64_t s = x.size(2), d = x.size(3), half = d / 2;
  const torch::Tensor inverse_frequency =
      torch::pow(kRopeTheta, -torch::arange(0, half, torch::kFloat) * 2 / static_cast<double>(d));
  const torch::Tensor angles =
      torch::outer(torch::arange(s, torch::kFloat), inverse_frequency).repeat({1, 2});
  const torch::Tensor rotated = torch::cat({-x.slice(3, half, d), x.slice(3, 0, half)}, 3);
  return x * angles.cos() + rotated * angles.sin();
}

// Grouped-query causal self-attention: `heads` query heads share `kv_heads` key and value
// heads (multi-head when equal, multi-query when 1).
struct AttentionImpl : torch::nn::Module {
  explicit AttentionImpl(const TransformerShape& t)
      : heads(t.heads),
        kv_heads(t.kv_heads),
        head_dim(t.head_dim),
        q(register_module("q", linear(t.hidden, t.heads * t.head_dim, t.qkv_bias))),
        k(register_module("k", linear(t.hidden, t.kv_heads * t.head_dim, t.qkv_bias))),
        v(register_module("v", linear(t.hidden, t.kv_heads * t.head_dim, t.qkv_bias))),
        o(register_module("o", linear(t.heads * t.head_dim, t.hidden, false))) {}

  torch::Tensor forward(const torch::Tensor& x) {
    const int64_t b = x.size(0), s = x.size(1);
    const auto split = [&](const torch::Tensor& y, int64_t n) {
      return y.view({b, s, n, head_dim}).transpose(1, 2);  // [B, n, S, d]
    };
    const int64_t group = heads / kv_heads;
    const torch::Tensor queries = rotary(split(q(x), heads));
    const torch::Tensor keys = rotary(split(k(x), kv_heads)).repeat_interleave(group, 1);
    const torch::Tensor values = split(v(x), kv_heads).repeat_interleave(group, 1);
    torch::Tensor scores =
        queries.matmul(keys.transpose(-2, -1)) / std::sqrt(static_cast<double>(head_dim));
    const torch::Tensor future = torch::ones({s, s}, torch::kBool).triu(1);
    scores = scores.masked_fill(future, -std::numeric_limits<float>::infinity());
    const torch::Tensor attended = torch::softmax(scores, -1).matmul(values);
    return o(attended.transpose(1, 2).reshape({b, s, heads * head_dim}));
  }

  int64_t heads, kv_heads, head_dim;
  torch::nn::Linear q, k, v, o;
};
TORCH_MODULE(Attention);

struct DecoderEmbeddingImpl : torch::nn::Module {
  DecoderEmbeddingImpl(int64_t vocab, int64_t hidden)
      : tokens(register_module("tokens", torch::nn::Embedding(vocab, hidden))) {}
  torch::Tensor forward(const torch::Tensor& ids) { return tokens(ids); }
  torch::nn::Embedding tokens;
};
TORCH_MODULE(DecoderEmbedding);

// x + attention(norm(x)), then x + mlp(norm(x)), the MLP dense or mixture-of-experts.
struct DecoderBlockImpl : torch::nn::Module, ExpertLayer {
  DecoderBlockImpl(const TransformerShape& t, int64_t block, const ExpertParallelGroup& group)
      : attention_norm(register_module("attention_norm", Norm(t.hidden, t.rms_norm))),
        attention(register_module("attention", Attention(t))),
        mlp_norm(register_module("mlp_norm", Norm(t.hidden, t.rms_norm))) {
    if (t.is_moe_block(block)) {
      moe = register_module("moe", MoeMlp(t, group));
    } else {
      mlp = register_module("mlp", GatedMlp(t.hidden, t.ffn, t.swiglu));
    }
  }
  torch::Tensor forward(torch::Tensor x) {
    x = x + attention(attention_norm(x));
    const torch::Tensor normed = mlp_norm(x);
    return x + (moe ? moe->forward(normed) : mlp->forward(normed));
  }
  std::vector<torch::Tensor> expert_parameters() override {
    return moe ? moe->expert_parameters() : std::vector<torch::Tensor>{};
  }

  Norm attention_norm;
  Attention attention;
  Norm mlp_norm;
  GatedMlp mlp{nullptr};
  MoeMlp moe{nullptr};
};
TORCH_MODULE(DecoderBlock);

struct DecoderHeadImpl : torch::nn::Module {
  DecoderHeadImpl(int64_t hidden, int64_t vocab, bool rms)
      : norm(register_module("norm", Norm(hidden, rms))),
        logits(register_module("logits", linear(hidden, vocab, false))) {}
  torch::Tensor forward(const torch::Tensor& x) { return logits(norm(x)); }
  Norm norm;
  torch::nn::Linear logits;
};
TORCH_MODULE(DecoderHead);

}  // namespace

torch::nn::AnyModule make_decoder_layer(const ZooArchitecture& arch, const ArchLayer& layer,
                                        const ExpertParallelGroup& expert_parallel) {
  const TransformerShape& t = arch.transformer;
  switch (layer.kind) {
    case ArchKind::kDecoderEmbedding:
      return torch::nn::AnyModule(DecoderEmbedding(t.vocab, t.hidden));
    case ArchKind::kDecoderBlock:
      return torch::nn::AnyModule(DecoderBlock(t, layer.block, expert_parallel));
    case ArchKind::kDecoderHead:
      return torch::nn::AnyModule(DecoderHead(t.hidden, t.vocab, t.rms_norm));
    default:
      throw std::logic_error("not a transformer layer");
  }
}

std::vector<torch::Tensor> expert_parameters(torch::nn::Module& layer) {
  if (auto* experts = dynamic_cast<ExpertLayer*>(&layer)) return experts->expert_parameters();
  return {};
}

std::string decoder_unsupported(const ZooArchitecture& arch) {
  const TransformerShape& t = arch.transformer;
  if (t.mla()) {
    return "real ranks run grouped-query attention; simulate multi-latent attention "
           "(model.zoo.kv_lora_rank) with pipetwin simulate";
  }
  if (t.tied_embeddings) {
    return "real ranks keep the embedding and the logits apart (model.zoo.tied_embeddings); "
           "simulate tied embeddings with pipetwin simulate";
  }
  if (t.head_dim % 2 != 0) {
    return "rotary embeddings rotate pairs: model.zoo.head_dim (" + std::to_string(t.head_dim) +
           ") must be even on real ranks";
  }
  if (t.moe.experts > 0 && t.moe.capacity_factor > 0) {
    return "real ranks route every token to its experts (dropless); simulate token dropping "
           "(model.zoo.moe.capacity_factor) with pipetwin simulate";
  }
  return "";
}

}  // namespace pipetwin
