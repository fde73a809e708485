// The shape of a decoder-only transformer as people write them down in 2026 (Llama, Qwen,
// Mixtral, DeepSeek-V3): grouped-query or multi-latent attention, a gated or plain MLP, RMSNorm
// or LayerNorm, and optionally mixture-of-experts MLPs. The zoo's "transformer" costs it
// (zoo_transformer.cpp) and its parameter count is the published one (docs/models.md).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "scenario.pb.h"

namespace pipetwin {

struct MoeShape {
  int64_t experts = 0;  // routed experts per MoE layer (0: a dense model)
  int64_t top_k = 1;
  int64_t shared_experts = 0;  // always-on experts of expert_ffn width
  int64_t expert_ffn = 0;
  int64_t first_dense_layers = 0;  // the first blocks keep a dense MLP of `ffn`
  double capacity_factor = 0;      // 0: dropless
  double router_imbalance = 1;     // the hottest expert's tokens over the mean
  // A measured histogram (replaces the imbalance), one count per expert.
  std::shared_ptr<const std::vector<double>> tokens_per_expert;
  bool router_bias = false;  // a learned bias per expert (DeepSeek-V3)
};

struct TransformerShape {
  int64_t layers = 0;
  int64_t hidden = 0;
  int64_t heads = 0;
  int64_t kv_heads = 0;
  int64_t head_dim = 0;       // query/key width per head (MLA: the part without rotary embedding)
  int64_t v_head_dim = 0;     // value width per head
  int64_t rope_head_dim = 0;  // MLA: the rotary part of each query/key head (0 otherwise)
  int64_t q_lora_rank = 0;    // MLA: the compressed query's width (0: queries uncompressed)
  int64_t kv_lora_rank = 0;   // MLA: the compressed key-value latent (0: not MLA)
  int64_t ffn = 0;            // the dense MLP's intermediate width
  int64_t vocab = 0;
  int64_t seq_len = 0;
  bool swiglu = true;
  bool rms_norm = true;
  bool tied_embeddings = false;
  bool qkv_bias = false;
  MoeShape moe;

  bool mla() const { return kv_lora_rank > 0; }
  bool is_moe_block(int64_t block) const {
    return moe.experts > 0 && block >= moe.first_dense_layers;
  }
  // Parameters, counted as Hugging Face counts them (the published totals).
  int64_t attention_parameters() const;
  int64_t mlp_parameters(int64_t width) const;  // one dense (or expert) MLP
  int64_t norm_parameters() const { return rms_norm ? hidden : 2 * hidden; }
  int64_t block_parameters(int64_t block) const;
  int64_t total_parameters() const;
};

// Reads and checks model.zoo's transformer fields; throws InputError naming
// "model.zoo.<field>" (or "model.zoo.moe.<field>").
TransformerShape transformer_shape(const proto::Zoo& zoo);

}  // namespace pipetwin
