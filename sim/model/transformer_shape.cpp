#include "sim/model/transformer_shape.h"

#include <cmath>
#include <string>
#include <utility>

#include "sim/model/zoo_fields.h"

namespace pipetwin {

int64_t TransformerShape::attention_parameters() const {
  const int64_t qk_head = head_dim + rope_head_dim;
  int64_t q = 0, kv = 0;
  if (mla()) {
    // DeepSeek-V2/V3: queries through a low-rank latent (normalised), keys and values
    // through one shared latent plus a rotary key shared by all heads.
    q = q_lora_rank > 0 ? hidden * q_lora_rank + q_lora_rank + q_lora_rank * heads * qk_head
                        : hidden * heads * qk_head;
    kv = hidden * (kv_lora_rank + rope_head_dim) + kv_lora_rank +
         kv_lora_rank * heads * (head_dim + v_head_dim);
  } else {
    q = hidden * heads * head_dim;
    kv = 2 * hidden * kv_heads * head_dim;
    if (qkv_bias) q += heads * head_dim, kv += 2 * kv_heads * head_dim;
  }
  return q + kv + heads * v_head_dim * hidden;
}

int64_t TransformerShape::mlp_parameters(int64_t width) const {
  return (swiglu ? 3 : 2) * hidden * width;
}

int64_t TransformerShape::block_parameters(int64_t block) const {
  int64_t mlp = 0;
  if (is_moe_block(block)) {
    mlp = (moe.experts + moe.shared_experts) * mlp_parameters(moe.expert_ffn) +
          (hidden + (moe.router_bias ? 1 : 0)) * moe.experts;  // the router
  } else {
    mlp = mlp_parameters(ffn);
  }
  return attention_parameters() + mlp + 2 * norm_parameters();
}

int64_t TransformerShape::total_parameters() const {
  int64_t total = vocab * hidden * (tied_embeddings ? 1 : 2) + norm_parameters();
  for (int64_t b = 0; b < layers; ++b) total += block_parameters(b);
  return total;
}

namespace {

// Widths and counts beyond any model trained, with room: they keep every product of the
// counts below within 64 bits.
constexpr int64_t kMaxWidth = 1 << 20;
constexpr int64_t kMaxExperts = 1 << 16;
// A trillion-parameter model times a thousand: beyond it the byte counts would overflow.
constexpr double kMaxParameters = 1e15;

int64_t bounded(int64_t value, int64_t limit, const std::string& field) {
  if (value > limit) {
    zoo_field_error(field, "at most " + std::to_string(limit) + ", got " + std::to_string(value));
  }
  return value;
}

int64_t optional_positive(bool present, int32_t value, int64_t fallback, const std::string& field) {
  if (!present) return fallback;
  if (value <= 0) zoo_field_error(field, "must be positive, got " + std::to_string(value));
  return value;
}

MoeShape moe_shape(const proto::Moe& m, int64_t layers) {
  MoeShape moe;
  moe.experts = bounded(zoo_positive(m.has_experts(), m.experts(), "moe.experts"), kMaxExperts,
                        "moe.experts");
  moe.top_k = zoo_positive(m.has_top_k(), m.top_k(), "moe.top_k");
  if (moe.top_k > moe.experts) {
    zoo_field_error("moe.top_k", "at most moe.experts (" + std::to_string(moe.experts) + "), got " +
                                     std::to_string(moe.top_k));
  }
  moe.expert_ffn = bounded(
      zoo_positive(m.has_expert_ffn_hidden(), m.expert_ffn_hidden(), "moe.expert_ffn_hidden"),
      kMaxWidth, "moe.expert_ffn_hidden");
  if (m.shared_experts() < 0) {
    zoo_field_error("moe.shared_experts",
                    "must not be negative, got " + std::to_string(m.shared_experts()));
  }
  moe.shared_experts = bounded(m.shared_experts(), kMaxExperts, "moe.shared_experts");
  moe.router_bias = m.router_bias();
  if (m.first_dense_layers() < 0 || m.first_dense_layers() >= layers) {
    zoo_field_error("moe.first_dense_layers", "must be in [0, layers = " + std::to_string(layers) +
                                                  "), got " +
                                                  std::to_string(m.first_dense_layers()));
  }
  moe.first_dense_layers = m.first_dense_layers();
  if (!(m.capacity_factor() == 0 || m.capacity_factor() >= 1) ||
      !std::isfinite(m.capacity_factor())) {
    zoo_field_error("moe.capacity_factor",
                    "must be 0 (dropless) or at least 1, got " + zoo_number(m.capacity_factor()));
  }
  moe.capacity_factor = m.capacity_factor();
  if (!(m.router_imbalance() >= 1 && m.router_imbalance() <= static_cast<double>(moe.experts))) {
    zoo_field_error("moe.router_imbalance",
                    "the hottest expert's share over the mean: in [1, experts = " +
                        std::to_string(moe.experts) + "], got " + zoo_number(m.router_imbalance()));
  }
  moe.router_imbalance = m.router_imbalance();
  if (m.tokens_per_expert_size() > 0) {
    if (m.tokens_per_expert_size() != moe.experts) {
      zoo_field_error("moe.tokens_per_expert",
                      "one count per expert: " + std::to_string(moe.experts) + " expected, got " +
                          std::to_string(m.tokens_per_expert_size()));
    }
    double total = 0;
    for (double t : m.tokens_per_expert()) {
      if (!(t >= 0) || !std::isfinite(t)) {
        zoo_field_error("moe.tokens_per_expert",
                        "counts must be finite and not negative, got " + zoo_number(t));
      }
      total += t;
    }
    if (total <= 0) zoo_field_error("moe.tokens_per_expert", "all counts are 0");
    if (m.has_router_imbalance()) {
      zoo_field_error("moe.router_imbalance", "give either router_imbalance or tokens_per_expert");
    }
    moe.tokens_per_expert = std::make_shared<const std::vector<double>>(
        m.tokens_per_expert().begin(), m.tokens_per_expert().end());
  }
  return moe;
}

}  // namespace

TransformerShape transformer_shape(const proto::Zoo& zoo) {
  TransformerShape t;
  t.layers = zoo_layer_count(zoo);
  t.hidden = zoo_positive(zoo.has_hidden(), zoo.hidden(), "hidden");
  t.heads = zoo_positive(zoo.has_heads(), zoo.heads(), "heads");
  t.seq_len = zoo_positive(zoo.has_seq_len(), zoo.seq_len(), "seq_len");
  t.vocab = zoo_positive(zoo.has_vocab(), zoo.vocab(), "vocab");
  t.ffn = zoo_positive(zoo.has_ffn_hidden(), zoo.ffn_hidden(), "ffn_hidden");
  t.kv_heads = optional_positive(zoo.has_kv_heads(), zoo.kv_heads(), t.heads, "kv_heads");
  if (t.heads % t.kv_heads != 0) {
    zoo_field_error("kv_heads", "heads (" + std::to_string(t.heads) +
                                    ") must be a multiple of kv_heads (" +
                                    std::to_string(t.kv_heads) + ")");
  }
  if (!zoo.has_head_dim() && t.hidden % t.heads != 0) {
    zoo_field_error("head_dim", "missing, and hidden (" + std::to_string(t.hidden) +
                                    ") is not a multiple of heads (" + std::to_string(t.heads) +
                                    ")");
  }
  t.head_dim =
      optional_positive(zoo.has_head_dim(), zoo.head_dim(), t.hidden / t.heads, "head_dim");
  t.v_head_dim =
      optional_positive(zoo.has_v_head_dim(), zoo.v_head_dim(), t.head_dim, "v_head_dim");
  t.kv_lora_rank = optional_positive(zoo.has_kv_lora_rank(), zoo.kv_lora_rank(), 0, "kv_lora_rank");
  t.q_lora_rank = optional_positive(zoo.has_q_lora_rank(), zoo.q_lora_rank(), 0, "q_lora_rank");
  t.rope_head_dim =
      optional_positive(zoo.has_rope_head_dim(), zoo.rope_head_dim(), 0, "rope_head_dim");
  if (!t.mla()) {
    const auto mla_only = [](const char* field) {
      zoo_field_error(field, "only multi-latent attention (kv_lora_rank) has it");
    };
    if (zoo.has_q_lora_rank()) mla_only("q_lora_rank");
    if (zoo.has_rope_head_dim()) mla_only("rope_head_dim");
    if (zoo.has_v_head_dim()) mla_only("v_head_dim");
  } else {
    if (t.rope_head_dim == 0) {
      zoo_field_error("rope_head_dim", "missing (required by multi-latent attention)");
    }
    if (zoo.qkv_bias()) zoo_field_error("qkv_bias", "multi-latent attention has no such bias");
  }
  t.swiglu = zoo.mlp() == proto::Zoo::SWIGLU;
  t.rms_norm = zoo.norm() == proto::Zoo::RMSNORM;
  t.tied_embeddings = zoo.tied_embeddings();
  t.qkv_bias = zoo.qkv_bias();
  if (zoo.has_moe()) t.moe = moe_shape(zoo.moe(), t.layers);
  const std::pair<const char*, int64_t> widths[] = {
      {"hidden", t.hidden},           {"heads", t.heads},
      {"kv_heads", t.kv_heads},       {"head_dim", t.head_dim},
      {"v_head_dim", t.v_head_dim},   {"rope_head_dim", t.rope_head_dim},
      {"q_lora_rank", t.q_lora_rank}, {"kv_lora_rank", t.kv_lora_rank},
      {"ffn_hidden", t.ffn},          {"vocab", t.vocab},
      {"seq_len", t.seq_len}};
  for (const auto& [field, value] : widths) bounded(value, kMaxWidth, field);
  // Counted in doubles first: the exact count in 64 bits is then safe.
  const double heads = static_cast<double>(t.heads), h = static_cast<double>(t.hidden);
  const double block =
      4 * h * heads * static_cast<double>(t.head_dim + t.rope_head_dim + t.v_head_dim) +
      4 * h * static_cast<double>(t.q_lora_rank + t.kv_lora_rank) +
      3 * h * static_cast<double>(t.ffn) +
      3 * h * static_cast<double>(t.moe.experts + t.moe.shared_experts) *
          static_cast<double>(t.moe.expert_ffn);
  const double total = static_cast<double>(t.layers) * block + 2 * h * static_cast<double>(t.vocab);
  if (total > kMaxParameters) {
    zoo_field_error("layers", "the model would have about " + zoo_number(total) +
                                  " parameters, more than " + zoo_number(kMaxParameters));
  }
  return t;
}

}  // namespace pipetwin
