// The zoo's "transformer" costed per sample of seq_len tokens (a multiply-add counts 2). Each
// block is one layer: attention, then a dense or mixture-of-experts MLP. It assumes what
// 2026's training stacks do: bf16 activations, fused (flash) attention that keeps no s x s
// scores, no dropout, rotary position embeddings (no position table). docs/models.md,
// "transformer", states each count and its source.
#include "sim/model/zoo_transformer.h"

#include <string>
#include <utility>
#include <vector>

#include "sim/model/zoo_fields.h"

namespace pipetwin {
namespace {

// Widths per token of the attention's tensors.
struct AttentionWidths {
  double q = 0, k = 0, v = 0, out = 0;  // all heads together
  double rotary = 0;                    // values RoPE rotates in q and k together
  double latent = 0;                    // MLA: the latents the backward keeps (pre and post norm)
  double matmul_weights = 0;            // the weights of its matrix products
};

AttentionWidths attention_widths(const TransformerShape& t) {
  AttentionWidths w;
  const double h = static_cast<double>(t.hidden), heads = static_cast<double>(t.heads);
  const double qk_head = static_cast<double>(t.head_dim + t.rope_head_dim);
  w.q = heads * qk_head;
  w.out = heads * static_cast<double>(t.v_head_dim);
  if (t.mla()) {
    const double q_lora = static_cast<double>(t.q_lora_rank);
    const double kv_lora = static_cast<double>(t.kv_lora_rank);
    const double rope = static_cast<double>(t.rope_head_dim);
    w.k = heads * qk_head;
    w.v = heads * static_cast<double>(t.v_head_dim);
    w.rotary = (heads + 1) * rope;  // each query head's, and the one shared key's
    w.latent = 2 * (q_lora + kv_lora + rope);
    w.matmul_weights = (q_lora > 0 ? h * q_lora + q_lora * w.q : h * w.q) + h * (kv_lora + rope) +
                       kv_lora * heads * static_cast<double>(t.head_dim + t.v_head_dim) + w.out * h;
  } else {
    const double kv = static_cast<double>(t.kv_heads * t.head_dim);
    w.k = w.v = kv;
    w.rotary = w.q + w.k;
    w.matmul_weights = h * (w.q + 2 * kv) + w.out * h;
  }
  return w;
}

// One MLP of intermediate width f per token: its FLOPs, the activations its backward keeps
// beyond its input (gate, up and their product for SwiGLU; the pre- and post-GeLU values
// otherwise), and the bytes its elementwise kernel moves.
struct MlpCosts {
  double flops = 0, stash = 0, memory = 0, weight_gradient_stash = 0;
};

MlpCosts mlp_costs(const TransformerShape& t, double f) {
  const double h = static_cast<double>(t.hidden);
  MlpCosts c;
  c.flops = 2 * static_cast<double>(t.mlp_parameters(static_cast<int64_t>(f)));
  c.stash = kZooHalf * (t.swiglu ? 3 : 2) * f;
  c.memory = kZooHalf * (t.swiglu ? 3 : 2) * f;
  // W needs each GEMM's input and output gradient: the up (and gate) GEMMs' input (h) and
  // gradients (f each), the down GEMM's input (f) and gradient (h).
  c.weight_gradient_stash = kZooHalf * (2 * h + (t.swiglu ? 3 : 2) * f);
  return c;
}

using Split = LayerGemm::Split;
using Part = LayerGemm::Part;

void add_gemm(std::vector<LayerGemm>& gemms, double rows, double n, double k, Split split,
              Part part = Part::kWeights, double count = 1) {
  gemms.push_back({rows, n, k, count, split, part});
}

// An MLP of width f: up (and gate, fused) column-parallel, down row-parallel.
void add_mlp_gemms(std::vector<LayerGemm>& gemms, const TransformerShape& t, double rows, double f,
                   Part part = Part::kWeights, double count = 1) {
  const double h = static_cast<double>(t.hidden);
  add_gemm(gemms, rows, (t.swiglu ? 2 : 1) * f, h, Split::kN, part, count);
  add_gemm(gemms, rows, h, f, Split::kK, part, count);
}

// The attention's products per token row: projections (MLA's down-projections whole on every
// tensor-parallel GPU), then QK^T and the product with V, a head each.
std::vector<LayerGemm> attention_gemms(const TransformerShape& t, const AttentionWidths& a) {
  const double s = static_cast<double>(t.seq_len), h = static_cast<double>(t.hidden);
  const double heads = static_cast<double>(t.heads);
  std::vector<LayerGemm> g;
  if (t.mla()) {
    const double q_lora = static_cast<double>(t.q_lora_rank);
    const double kv_lora = static_cast<double>(t.kv_lora_rank);
    if (q_lora > 0) {
      add_gemm(g, s, q_lora, h, Split::kNone);
      add_gemm(g, s, a.q, q_lora, Split::kN);
    } else {
      add_gemm(g, s, a.q, h, Split::kN);
    }
    add_gemm(g, s, kv_lora + static_cast<double>(t.rope_head_dim), h, Split::kNone);
    add_gemm(g, s, heads * static_cast<double>(t.head_dim + t.v_head_dim), kv_lora, Split::kN);
  } else {
    add_gemm(g, s, a.q + a.k + a.v, h, Split::kN);
  }
  add_gemm(g, s, h, a.out, Split::kK);
  // Flash attention: QK^T and the product with V run fused, the scores on chip.
  add_gemm(g, s, s, static_cast<double>(t.head_dim + t.rope_head_dim), Split::kCount,
           Part::kAttentionCore, heads);
  add_gemm(g, s, static_cast<double>(t.v_head_dim), s, Split::kCount, Part::kAttentionCore, heads);
  g[g.size() - 2].on_chip = g.back().on_chip = true;
  return g;
}

ModelLayer block_layer(const TransformerShape& t, int64_t index) {
  const double s = static_cast<double>(t.seq_len), h = static_cast<double>(t.hidden);
  const double heads = static_cast<double>(t.heads);
  const AttentionWidths a = attention_widths(t);
  // Per token. Attention: its GEMMs, then QK^T and the product with V over the whole
  // sequence (no causal halving, as Megatron-LM counts it).
  const double attention_core_flops =
      2 * s * heads * static_cast<double>(t.head_dim + t.rope_head_dim) + 2 * s * a.out;
  double flops = 2 * a.matmul_weights + attention_core_flops;
  double weight_flops = 2 * a.matmul_weights;
  // Kept for the backward: both norms' inputs and outputs (8h), q, k, v and the attention
  // output, flash attention's log-sum-exp (fp32 per head), MLA's latents.
  double stash = kZooHalf * (4 * h + a.q + a.k + a.v + a.out + a.latent) + kZooFp32 * heads;
  double weight_stash = kZooHalf * (2 * h + a.q + a.k + a.v + a.out + h);
  // Memory-bound kernels: two norms (read and write h each), two residual adds (read 2h,
  // write h), RoPE on q and k (read and write).
  double memory = kZooHalf * (4 * h + 6 * h + 2 * a.rotary);

  ModelLayer l;
  std::vector<LayerGemm> gemms = attention_gemms(t, a);
  const std::string name = "block_" + std::to_string(index);
  if (t.is_moe_block(index)) {
    const MoeShape& moe = t.moe;
    const double experts = static_cast<double>(moe.experts), k = static_cast<double>(moe.top_k);
    const MlpCosts expert = mlp_costs(t, static_cast<double>(moe.expert_ffn));
    const double shared = static_cast<double>(moe.shared_experts);
    const double router = 2 * h * experts;
    flops += router + (k + shared) * expert.flops;
    weight_flops += router + (k + shared) * expert.flops;
    // The router's fp32 logits; every routed copy of a token (its input and output) with
    // its expert's activations; the shared experts' activations.
    stash += kZooFp32 * experts + k * (kZooHalf * 2 * h + expert.stash) + shared * expert.stash;
    weight_stash += k * expert.weight_gradient_stash + shared * expert.weight_gradient_stash;
    // Permuting tokens to their experts and back (read and write each copy), and the
    // experts' elementwise kernels.
    memory += kZooHalf * 4 * h * k + (k + shared) * expert.memory;
    l = zoo_layer(name, s * flops, s * h * kZooHalf, s * stash,
                  t.block_parameters(index) * static_cast<int64_t>(kZooFp32));
    add_gemm(gemms, s, experts, h, Split::kNone);  // the router
    gemms.back().keeps_bf16 = true;
    add_mlp_gemms(gemms, t, s * k / experts, static_cast<double>(moe.expert_ffn), Part::kExpert,
                  experts);
    if (shared > 0) add_mlp_gemms(gemms, t, s, shared * static_cast<double>(moe.expert_ffn));
    l.moe.experts = static_cast<int32_t>(moe.experts);
    l.moe.top_k = static_cast<int32_t>(moe.top_k);
    l.moe.expert_flops_per_sample = s * expert.flops;
    l.moe.expert_parameter_bytes =
        moe.experts * t.mlp_parameters(moe.expert_ffn) * static_cast<int64_t>(kZooFp32);
    l.moe.dispatch_bytes_per_sample = s * k * h * kZooHalf;
    l.moe.router_imbalance = moe.router_imbalance;
    l.moe.tokens_per_expert = moe.tokens_per_expert;
    l.moe.capacity_factor = moe.capacity_factor;
    l.moe.shared_experts = static_cast<int32_t>(moe.shared_experts);
  } else {
    const MlpCosts mlp = mlp_costs(t, static_cast<double>(t.ffn));
    flops += mlp.flops;
    weight_flops += mlp.flops;
    stash += mlp.stash;
    weight_stash += mlp.weight_gradient_stash;
    memory += mlp.memory;
    l = zoo_layer(name, s * flops, s * h * kZooHalf, s * stash,
                  t.block_parameters(index) * static_cast<int64_t>(kZooFp32));
    add_mlp_gemms(gemms, t, s, static_cast<double>(t.ffn));
  }
  l.gemms = std::move(gemms);
  // Tensor parallelism (Megatron-LM): attention and MLP each all-reduce their output
  // forward and their input gradient backward, s x h 16-bit values per sample; the norms'
  // inputs and outputs stay whole on every GPU unless sequence parallelism splits them.
  l.tp_fwd_collectives = l.tp_bwd_collectives = 2;
  l.tp_bwd_grad_collectives = 2;  // the QKV (or MLA up-) projection's and the MLP's inputs
  l.tp_allreduce_bytes_per_sample = s * h * kZooHalf;
  l.tp_undivided_stash_bytes_per_sample = s * kZooHalf * 4 * h;
  l.bwd_weight->flops_per_sample = s * weight_flops;
  l.bwd_weight_stash_bytes_per_sample = s * weight_stash;
  // Full recomputation keeps the block's input. Flash attention keeps no scores, so
  // selective recomputation has nothing to drop.
  l.checkpoint_bytes_per_sample = s * h * kZooHalf;
  l.fwd_memory_bytes_per_sample = s * memory;
  l.tp_undivided_memory_bytes_per_sample = s * kZooHalf * 10 * h;
  // Context parallelism: the keys and values of the whole sequence, what Ulysses' all-to-alls
  // move (queries, keys, values, then the output), and the attention core.
  l.cp_kv_bytes_per_sample = s * (a.k + a.v) * kZooHalf;
  l.cp_qkvo_bytes_per_sample = s * (a.q + a.k + a.v + a.out) * kZooHalf;
  l.cp_attention_flops_per_sample = s * attention_core_flops;
  return l;
}

}  // namespace

std::vector<ModelLayer> transformer_layers(const TransformerShape& t) {
  const double s = static_cast<double>(t.seq_len), h = static_cast<double>(t.hidden);
  const double v = static_cast<double>(t.vocab);
  std::vector<ModelLayer> layers;
  // The token embedding: a lookup; its backward needs only the token ids (int64).
  layers.push_back(zoo_layer("embedding", 0, s * h * kZooHalf, s * 8,
                             t.vocab * t.hidden * static_cast<int64_t>(kZooFp32)));
  layers.back().tp_fwd_collectives = 1;
  layers.back().tp_allreduce_bytes_per_sample = s * h * kZooHalf;
  layers.back().tp_undivided_stash_bytes_per_sample = s * 8;
  for (int64_t b = 0; b < t.layers; ++b) layers.push_back(block_layer(t, b));
  // Final norm and logits. Tied embeddings share the embedding's matrix: counted once, as the
  // published parameter totals count it (a pipeline's last stage then holds no copy here).
  const int64_t head_parameters =
      (t.tied_embeddings ? 0 : t.vocab * t.hidden) + t.norm_parameters();
  layers.push_back(zoo_layer("lm_head", 2 * s * h * v, s * v * kZooHalf,
                             s * v * kZooFp32 + 2 * s * h * kZooHalf,
                             head_parameters * static_cast<int64_t>(kZooFp32)));
  ModelLayer& head = layers.back();
  head.bwd_weight->flops_per_sample = 2 * s * h * v;  // tied or not, the GEMM's weight gradient
  add_gemm(head.gemms, s, v, h, Split::kN);           // vocabulary-parallel logits
  head.gemms.back().keeps_bf16 = true;
  head.tp_bwd_collectives = head.tp_bwd_grad_collectives = 1;
  head.tp_allreduce_bytes_per_sample = s * h * kZooHalf;
  head.bwd_weight_stash_bytes_per_sample = s * h * kZooHalf + s * v * kZooHalf;
  head.fwd_memory_bytes_per_sample = 4 * s * h + 8 * s * v;
  head.tp_undivided_memory_bytes_per_sample = 4 * s * h;
  return layers;
}

}  // namespace pipetwin
