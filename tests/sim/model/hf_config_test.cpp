// Hugging Face config.json files read as zoo transformers: the fields each architecture
// names, and a clear error (file, line, field) for what cannot be read.
#include "sim/model/hf_config.h"

#include <gtest/gtest.h>

#include <string>

#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

std::string error_of(const std::string& text) {
  try {
    zoo_from_hf_config(text, "config.json");
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an InputError";
  return "";
}

const char* kLlama = R"({
  "model_type": "llama",
  "hidden_size": 4096,
  "intermediate_size": 14336,
  "num_attention_heads": 32,
  "num_hidden_layers": 32,
  "num_key_value_heads": 8,
  "vocab_size": 128256,
  "hidden_act": "silu"
})";

TEST(HfConfig, ReadsALlamaShape) {
  const proto::Zoo zoo = zoo_from_hf_config(kLlama, "config.json");
  EXPECT_EQ(zoo.name(), "transformer");
  EXPECT_EQ(zoo.hidden(), 4096);
  EXPECT_EQ(zoo.ffn_hidden(), 14336);
  EXPECT_EQ(zoo.heads(), 32);
  EXPECT_EQ(zoo.kv_heads(), 8);
  EXPECT_EQ(zoo.layers(), 32);
  EXPECT_EQ(zoo.vocab(), 128256);
  EXPECT_EQ(zoo.mlp(), proto::Zoo::SWIGLU);
  EXPECT_EQ(zoo.norm(), proto::Zoo::RMSNORM);
  EXPECT_FALSE(zoo.tied_embeddings());
  EXPECT_FALSE(zoo.has_moe());
  EXPECT_FALSE(zoo.has_seq_len());  // the training sequence is the scenario's
}

TEST(HfConfig, ReadsMixtureOfExpertsFields) {
  std::string mixtral = kLlama;
  mixtral.replace(mixtral.find("\"llama\""), 7, "\"mixtral\"");
  mixtral.insert(mixtral.rfind('}'), R"(, "num_local_experts": 8, "num_experts_per_tok": 2)");
  const proto::Zoo zoo = zoo_from_hf_config(mixtral, "config.json");
  EXPECT_EQ(zoo.moe().experts(), 8);
  EXPECT_EQ(zoo.moe().top_k(), 2);
  EXPECT_EQ(zoo.moe().expert_ffn_hidden(), 14336);
}

TEST(HfConfig, MissingFieldNamesFileAndField) {
  std::string text = kLlama;
  text.erase(text.find("  \"num_hidden_layers\": 32,\n"), 27);
  EXPECT_EQ(error_of(text),
            "config.json:1: num_hidden_layers: missing (it sets the model's shape)");
}

TEST(HfConfig, MistypedFieldNamesItsLine) {
  std::string text = kLlama;
  text.replace(text.find("4096"), 4, "\"4096\"");
  EXPECT_EQ(error_of(text), "config.json:3: hidden_size: must be an integer, got \"4096\"");
}

TEST(HfConfig, UnknownArchitectureListsTheKnownOnes) {
  std::string text = kLlama;
  text.replace(text.find("\"llama\""), 7, "\"gpt2\"");
  const std::string error = error_of(text);
  EXPECT_NE(error.find("config.json:2: model_type: unknown architecture \"gpt2\""),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("deepseek_v3"), std::string::npos) << error;
}

TEST(HfConfig, NotJsonNamesTheLine) {
  const std::string error = error_of("{\n  \"model_type\": \"llama\",\n  oops\n}");
  EXPECT_EQ(error.rfind("config.json:3: not JSON", 0), 0u) << error;
}

TEST(HfConfig, MoeExpertWidthMissingForQwen) {
  std::string text = kLlama;
  text.replace(text.find("\"llama\""), 7, "\"qwen2_moe\"");
  text.insert(text.rfind('}'), R"(, "num_experts": 64, "num_experts_per_tok": 8)");
  EXPECT_EQ(error_of(text),
            "config.json:1: moe_intermediate_size: missing (it sets the model's shape)");
}

}  // namespace
}  // namespace pipetwin
