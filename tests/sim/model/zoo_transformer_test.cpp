// The zoo's "transformer" held against published figures: the parameter counts of Llama 3,
// Mixtral and DeepSeek-V3 (as their configs ship them), the GPT block it must reduce to, the
// 2N FLOPs per token and parameter of its matrix products, and a one-expert top-1 MoE
// layer against the dense MLP of the same width.
#include <gtest/gtest.h>

#include <fstream>
#include <numeric>
#include <sstream>
#include <string>

#include "sim/model/hf_config.h"
#include "sim/model/model_sources.h"
#include "sim/model/transformer_shape.h"

namespace pipetwin {
namespace {

proto::Zoo shipped_config(const std::string& name, int seq_len = 4096) {
  const std::string path = std::string(PIPETWIN_SOURCE_DIR "/scenarios/models/") + name;
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  std::stringstream text;
  text << in.rdbuf();
  proto::Zoo zoo = zoo_from_hf_config(text.str(), path);
  zoo.set_seq_len(seq_len);
  return zoo;
}

// Parameters as the costed layers hold them (fp32 bytes / 4).
int64_t layer_parameters(const proto::Zoo& zoo) {
  const ModelSpec spec = model_from_zoo(zoo);
  int64_t bytes = 0;
  for (const ModelLayer& l : spec.layers) bytes += l.parameter_bytes;
  return bytes / 4;
}

TEST(ZooTransformer, ParameterCountsArePublishedOnes) {
  // Hugging Face's num_parameters() of each model.
  const std::pair<const char*, int64_t> published[] = {
      {"llama3-8b.json", 8'030'261'248},
      {"llama3-70b.json", 70'553'706'496},
      {"mixtral-8x7b.json", 46'702'792'704},
  };
  for (const auto& [name, count] : published) {
    SCOPED_TRACE(name);
    const proto::Zoo zoo = shipped_config(name);
    EXPECT_EQ(transformer_shape(zoo).total_parameters(), count);
    EXPECT_EQ(layer_parameters(zoo), count);
  }
}

TEST(ZooTransformer, DeepSeekV3HasItsPublished671BillionParameters) {
  // DeepSeek-V3's report: 671B total parameters in the main model (the multi-token
  // prediction module's 14B come on top, and are not modelled), 37B activated per token.
  const TransformerShape t = transformer_shape(shipped_config("deepseek-v3.json"));
  EXPECT_NEAR(static_cast<double>(t.total_parameters()), 671e9, 0.001 * 671e9);
  // Activated: attention, norms, the dense blocks, the shared and top-8 routed experts and
  // the router of every MoE block, and the logits (the embedding is a lookup).
  double activated = static_cast<double>(t.vocab * t.hidden + t.norm_parameters());
  for (int64_t b = 0; b < t.layers; ++b) {
    activated += static_cast<double>(t.attention_parameters() + 2 * t.norm_parameters());
    activated +=
        static_cast<double>(t.is_moe_block(b) ? (t.moe.top_k + t.moe.shared_experts) *
                                                        t.mlp_parameters(t.moe.expert_ffn) +
                                                    t.hidden * t.moe.experts
                                              : t.mlp_parameters(t.ffn));
  }
  EXPECT_NEAR(activated, 37e9, 0.03 * 37e9);
}

proto::Zoo gpt_like(const std::string& name) {
  proto::Zoo zoo;
  zoo.set_name(name);
  zoo.set_layers(3);
  zoo.set_hidden(512);
  zoo.set_heads(8);
  zoo.set_seq_len(256);
  zoo.set_vocab(1000);
  return zoo;
}

TEST(ZooTransformer, ReducesToTheGptBlockWithGeluAndFourTimesTheWidth) {
  proto::Zoo transformer = gpt_like("transformer");
  transformer.set_ffn_hidden(4 * 512);
  transformer.set_mlp(proto::Zoo::GELU);
  transformer.set_norm(proto::Zoo::LAYERNORM);
  const ModelSpec t = model_from_zoo(transformer);
  const ModelSpec g = model_from_zoo(gpt_like("gpt"));
  ASSERT_EQ(t.layers.size(), g.layers.size());
  for (size_t l = 1; l + 1 < t.layers.size(); ++l) {  // the blocks: 24sh^2 + 4s^2h
    EXPECT_DOUBLE_EQ(t.layers[l].fwd.flops_per_sample, g.layers[l].fwd.flops_per_sample);
    EXPECT_DOUBLE_EQ(t.layers[l].bwd.flops_per_sample, g.layers[l].bwd.flops_per_sample);
    EXPECT_DOUBLE_EQ(t.layers[l].bwd_weight->flops_per_sample,
                     g.layers[l].bwd_weight->flops_per_sample);
    EXPECT_EQ(t.layers[l].tp_fwd_collectives, g.layers[l].tp_fwd_collectives);
    EXPECT_DOUBLE_EQ(t.layers[l].tp_allreduce_bytes_per_sample,
                     g.layers[l].tp_allreduce_bytes_per_sample);
  }
  EXPECT_DOUBLE_EQ(t.layers.back().fwd.flops_per_sample, g.layers.back().fwd.flops_per_sample);
}

TEST(ZooTransformer, MatrixProductsCostTwoFlopsPerTokenAndParameter) {
  // Llama-3-8B: a block's forward FLOPs beyond attention's QK^T and AV (4 s x heads x
  // head_dim per token) are 2 x its weights per token, and the weight gradients (W) the same.
  const proto::Zoo zoo = shipped_config("llama3-8b.json", 8192);
  const TransformerShape t = transformer_shape(zoo);
  const ModelSpec spec = model_from_zoo(zoo);
  const double s = 8192;
  const double weights = static_cast<double>(t.block_parameters(0) - 2 * t.norm_parameters());
  const double core = 4 * s * static_cast<double>(t.heads * t.head_dim);
  EXPECT_DOUBLE_EQ(spec.layers[1].fwd.flops_per_sample / s, 2 * weights + core);
  EXPECT_DOUBLE_EQ(spec.layers[1].bwd_weight->flops_per_sample / s, 2 * weights);
  EXPECT_DOUBLE_EQ(spec.layers.back().fwd.flops_per_sample / s,
                   2.0 * static_cast<double>(t.vocab * t.hidden));
}

TEST(ZooTransformer, OneExpertTopOneIsTheDenseMlpPlusItsRouter) {
  proto::Zoo dense = gpt_like("transformer");
  dense.set_ffn_hidden(1536);
  proto::Zoo moe = dense;
  moe.mutable_moe()->set_experts(1);
  moe.mutable_moe()->set_top_k(1);
  moe.mutable_moe()->set_expert_ffn_hidden(1536);
  const ModelSpec d = model_from_zoo(dense);
  const ModelSpec m = model_from_zoo(moe);
  const double s = 256, h = 512;
  for (size_t l = 1; l + 1 < d.layers.size(); ++l) {
    // The router is one h x 1 product: 2h FLOPs per token, h weights.
    EXPECT_DOUBLE_EQ(m.layers[l].fwd.flops_per_sample - 2 * h * s,
                     d.layers[l].fwd.flops_per_sample);
    EXPECT_EQ(m.layers[l].parameter_bytes - static_cast<int64_t>(4 * h),
              d.layers[l].parameter_bytes);
    EXPECT_EQ(m.layers[l].moe.experts, 1);
    EXPECT_DOUBLE_EQ(m.layers[l].moe.expert_flops_per_sample, 2 * 3 * h * 1536 * s);
  }
}

TEST(ZooTransformer, GroupedQueryAttentionShrinksKeysAndValuesOnly) {
  proto::Zoo mha = gpt_like("transformer");
  mha.set_ffn_hidden(1024);
  proto::Zoo gqa = mha;
  gqa.set_kv_heads(2);
  const TransformerShape a = transformer_shape(mha), b = transformer_shape(gqa);
  // q and o keep h x h each; k and v go from h x h to h x (h / 4).
  EXPECT_EQ(a.attention_parameters() - b.attention_parameters(), 2 * (512 * 512 - 512 * 128));
}

}  // namespace
}  // namespace pipetwin
