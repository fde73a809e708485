#include "backend/torch/decoder_layers.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "backend/torch/linear_shards.h"
#include "backend/torch/moe_mlp.h"
#include "backend/torch/tensor_parallel_layers.h"
#include "backend/torch/tensor_parallel_ops.h"

namespace pipetwin {
namespace {

// RoPE's base frequency (Su et al. 2021; Llama 2). The shapes carry no rope_theta: the
// cost is the same for any base, and so is the test of equality with the reference.
constexpr double kRopeTheta = 10000;
constexpr double kNormEpsilon = 1e-5;

// The operators around a split region, or nothing when the layers are whole.
torch::Tensor enter(const torch::Tensor& x, const TensorParallelGroup& group) {
  return group.splits() ? enter_tensor_parallel(x, group, kSequenceDim) : x;
}
torch::Tensor leave(const torch::Tensor& x, const TensorParallelGroup& group) {
  return group.splits() ? leave_tensor_parallel(x, group, kSequenceDim) : x;
}

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
// heads (multi-head when equal, multi-query when 1). Split over a tensor-parallel group,
// each rank holds 1/T of the query heads and of the key-value heads they share (q, k and v
// column-parallel by head, o row-parallel).
struct AttentionImpl : torch::nn::Module {
  AttentionImpl(const TransformerShape& t, const TensorParallelGroup& group)
      : heads(t.heads / group.size),
        kv_heads(t.kv_heads / group.size),
        head_dim(t.head_dim),
        group(group),
        q(register_module("q", linear(t.hidden, t.heads * t.head_dim, t.qkv_bias))),
        k(register_module("k", linear(t.hidden, t.kv_heads * t.head_dim, t.qkv_bias))),
        v(register_module("v", linear(t.hidden, t.kv_heads * t.head_dim, t.qkv_bias))),
        o(register_module("o", linear(t.heads * t.head_dim, t.hidden, false))) {
    if (!group.splits()) return;
    for (torch::nn::Linear* column : {&q, &k, &v}) keep_output_shard(*column, group);
    keep_input_shard(o, group);
  }

  torch::Tensor forward(const torch::Tensor& input) {
    const torch::Tensor x = enter(input, group);
    const int64_t b = x.size(0), s = x.size(1);
    const auto split = [&](const torch::Tensor& y, int64_t n) {
      return y.view({b, s, n, head_dim}).transpose(1, 2);  // [B, n, S, d]
    };
    const int64_t shared = heads / kv_heads;
    const torch::Tensor queries = rotary(split(q(x), heads));
    const torch::Tensor keys = rotary(split(k(x), kv_heads)).repeat_interleave(shared, 1);
    const torch::Tensor values = split(v(x), kv_heads).repeat_interleave(shared, 1);
    torch::Tensor scores =
        queries.matmul(keys.transpose(-2, -1)) / std::sqrt(static_cast<double>(head_dim));
    const torch::Tensor future = torch::ones({s, s}, torch::kBool).triu(1);
    scores = scores.masked_fill(future, -std::numeric_limits<float>::infinity());
    const torch::Tensor attended = torch::softmax(scores, -1).matmul(values);
    return leave(o(attended.transpose(1, 2).reshape({b, s, heads * head_dim})), group);
  }

  int64_t heads, kv_heads, head_dim;  // this rank's
  TensorParallelGroup group;
  torch::nn::Linear q, k, v, o;
};
TORCH_MODULE(Attention);

// The token table; split, each rank looks the ids up in its 1/T of the vocabulary (zeros
// elsewhere) and the group sums them.
struct DecoderEmbeddingImpl : torch::nn::Module, TensorParallelLayer {
  DecoderEmbeddingImpl(int64_t vocab, int64_t hidden, const TensorParallelGroup& group)
      : tokens(register_module("tokens", torch::nn::Embedding(vocab, hidden))),
        group(group),
        vocab_per_rank(vocab / group.size) {
    if (group.splits()) keep_shard(tokens->weight, 0, group);
  }
  torch::Tensor forward(const torch::Tensor& ids) {
    if (!group.splits()) return tokens(ids);
    const torch::Tensor local = ids - group.rank * vocab_per_rank;
    const torch::Tensor outside = (local < 0).logical_or(local >= vocab_per_rank);
    const torch::Tensor embedded =
        tokens(local.masked_fill(outside, 0)).masked_fill(outside.unsqueeze(-1), 0.0);
    return leave(embedded, group);
  }
  std::vector<torch::Tensor> replicated_parameters() override { return {}; }

  torch::nn::Embedding tokens;
  TensorParallelGroup group;
  int64_t vocab_per_rank;
};
TORCH_MODULE(DecoderEmbedding);

// x + attention(norm(x)), then x + mlp(norm(x)), the MLP dense or mixture-of-experts; the
// norms whole on every tensor-parallel rank, the dense MLP split like Megatron-LM's (gate and
// up column-parallel, down row-parallel).
struct DecoderBlockImpl : torch::nn::Module, ExpertLayer, TensorParallelLayer {
  DecoderBlockImpl(const TransformerShape& t, int64_t block, const ExpertParallelGroup& experts,
                   const TensorParallelGroup& group)
      : attention_norm(register_module("attention_norm", Norm(t.hidden, t.rms_norm))),
        attention(register_module("attention", Attention(t, group))),
        mlp_norm(register_module("mlp_norm", Norm(t.hidden, t.rms_norm))),
        group(group) {
    if (t.is_moe_block(block)) {
      moe = register_module("moe", MoeMlp(t, experts, group));
    } else {
      mlp = register_module("mlp", GatedMlp(t.hidden, t.ffn, t.swiglu));
      if (group.splits()) mlp->split(group);
    }
  }
  torch::Tensor forward(torch::Tensor x) {
    x = x + attention(attention_norm(x));
    const torch::Tensor normed = mlp_norm(x);
    return x + (moe ? moe->forward(normed) : leave(mlp->forward(enter(normed, group)), group));
  }
  std::vector<torch::Tensor> expert_parameters() override {
    return moe ? moe->expert_parameters() : std::vector<torch::Tensor>{};
  }
  std::vector<torch::Tensor> replicated_parameters() override {
    std::vector<torch::Tensor> whole = attention_norm->parameters();
    for (const auto& p : mlp_norm->parameters()) whole.push_back(p);
    if (moe) {
      for (const auto& p : moe->router_parameters()) whole.push_back(p);
    }
    return whole;
  }

  Norm attention_norm;
  Attention attention;
  Norm mlp_norm;
  TensorParallelGroup group;
  GatedMlp mlp{nullptr};
  MoeMlp moe{nullptr};
};
TORCH_MODULE(DecoderBlock);

// The final norm (whole) and the logits, split by vocabulary and gathered whole for the loss,
// which every tensor-parallel rank then computes alike.
struct DecoderHeadImpl : torch::nn::Module, TensorParallelLayer {
  DecoderHeadImpl(int64_t hidden, int64_t vocab, bool rms, const TensorParallelGroup& group)
      : norm(register_module("norm", Norm(hidden, rms))),
        logits(register_module("logits", linear(hidden, vocab, false))),
        group(group) {
    if (group.splits()) keep_output_shard(logits, group);
  }
  torch::Tensor forward(const torch::Tensor& x) {
    if (!group.splits()) return logits(norm(x));
    return gather_from_tensor_parallel(logits(enter(norm(x), group)), group, -1);
  }
  std::vector<torch::Tensor> replicated_parameters() override { return norm->parameters(); }

  Norm norm;
  torch::nn::Linear logits;
  TensorParallelGroup group;
};
TORCH_MODULE(DecoderHead);

}  // namespace

torch::nn::AnyModule make_decoder_layer(const ZooArchitecture& arch, const ArchLayer& layer,
                                        const ExpertParallelGroup& expert_parallel,
                                        const TensorParallelGroup& tensor_parallel) {
  const TransformerShape& t = arch.transformer;
  switch (layer.kind) {
    case ArchKind::kDecoderEmbedding:
      return torch::nn::AnyModule(DecoderEmbedding(t.vocab, t.hidden, tensor_parallel));
    case ArchKind::kDecoderBlock:
      return torch::nn::AnyModule(DecoderBlock(t, layer.block, expert_parallel, tensor_parallel));
    case ArchKind::kDecoderHead:
      return torch::nn::AnyModule(DecoderHead(t.hidden, t.vocab, t.rms_norm, tensor_parallel));
    default:
      throw std::logic_error("not a transformer layer");
  }
}

std::vector<torch::Tensor> expert_parameters(torch::nn::Module& layer) {
  if (auto* experts = dynamic_cast<ExpertLayer*>(&layer)) return experts->expert_parameters();
  return {};
}

ExpertsApart experts_apart(torch::nn::Module& layer, const std::vector<torch::Tensor>& parameters) {
  const std::vector<torch::Tensor> held = expert_parameters(layer);
  ExpertsApart apart;
  for (const auto& p : parameters) {
    const bool expert =
        std::any_of(held.begin(), held.end(), [&](const torch::Tensor& e) { return e.is_same(p); });
    (expert ? apart.experts : apart.others).push_back(p);
  }
  return apart;
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

std::string decoder_tensor_parallel_unsupported(const ZooArchitecture& arch, int32_t size,
                                                bool sequence_parallel, bool experts_split) {
  const TransformerShape& t = arch.transformer;
  const auto indivisible = [&](const std::string& field, int64_t value) {
    return "model.zoo." + field + " (" + std::to_string(value) + ") does not split " +
           std::to_string(size) + " ways (training.tensor_parallel: " + std::to_string(size) + ")";
  };
  if (t.heads % size != 0) return indivisible("heads", t.heads);
  if (t.kv_heads % size != 0) return indivisible("kv_heads", t.kv_heads);
  if (t.vocab % size != 0) {
    return indivisible("vocab", t.vocab) +
           ": real ranks split the embedding and the logits "
           "by vocabulary";
  }
  if (sequence_parallel && arch.seq_len % size != 0) {
    return indivisible("seq_len", arch.seq_len) + " for training.sequence_parallel";
  }
  const bool dense_blocks = t.moe.experts == 0 || t.moe.first_dense_layers > 0;
  if (dense_blocks && t.ffn % size != 0) return indivisible("ffn", t.ffn);
  if (t.moe.experts > 0) {
    if (!sequence_parallel) {
      return "experts with tensor parallelism route each rank's part of the sequence, as "
             "Megatron-Core requires: set training.sequence_parallel: true";
    }
    const int64_t shared = t.moe.shared_experts * t.moe.expert_ffn;
    if (shared % size != 0) return indivisible("moe.shared_experts x expert_ffn", shared);
    if (experts_split && t.moe.expert_ffn % size != 0) {
      return indivisible("moe.expert_ffn", t.moe.expert_ffn) +
             "; whole experts take training.expert_tensor_parallel: 1";
    }
  }
  return "";
}

}  // namespace pipetwin
