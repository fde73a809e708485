// Bad transformer, mixture-of-experts and Hugging Face config input on the command line: exit
// 2 with the file, the line and the field, never a crash.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "cli_runner.h"

namespace pipetwin {
namespace {

using ::testing::HasSubstr;

const char* kScenario = R"(cluster { preset: "dgx-h100" nodes: 1 }
model {
  hf_config: "config.json"
  zoo { seq_len: 1024 }
}
training { global_batch: 8 microbatches: 4 data_parallel: 2 }
schedule { stages: 2 }
)";

const char* kMixtral = R"({
  "model_type": "mixtral",
  "hidden_size": 512,
  "intermediate_size": 1024,
  "num_attention_heads": 8,
  "num_hidden_layers": 2,
  "num_key_value_heads": 2,
  "num_local_experts": 4,
  "num_experts_per_tok": 2,
  "vocab_size": 1000
})";

testing::CliResult simulate(const std::string& config, const std::string& more = "") {
  const testing::TempDir dir;
  dir.write("config.json", config);
  return testing::run_pipetwin("simulate " + dir.write("s.textproto", kScenario).string() + more);
}

TEST(TransformerInput, AConfigRunsAndItsExpertsSpread) {
  const testing::CliResult r = simulate(kMixtral, " --set training.expert_parallel=2");
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(TransformerInput, AMissingConfigNamesTheField) {
  const testing::CliResult r = testing::run_pipetwin(
      "simulate builtin:llama3-8b-64gpu --set model.hf_config=models/nowhere.json");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("model.hf_config"));
  EXPECT_THAT(r.err, HasSubstr("cannot read file"));
}

// A device never ends: it is refused, not read.
TEST(TransformerInput, ADeviceIsNotAConfig) {
  const testing::CliResult r = testing::run_pipetwin(
      "simulate builtin:llama3-8b-64gpu --set model.hf_config=/dev/zero");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("model.hf_config: '/dev/zero' is not a regular file"));
}

TEST(TransformerInput, AConfigErrorNamesTheConfigLineAndField) {
  std::string config = kMixtral;
  config.replace(config.find("\"num_experts_per_tok\": 2"), 24, "\"num_experts_per_tok\": -2");
  const testing::CliResult r = simulate(config);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("config.json:9: num_experts_per_tok: must be a positive"));
}

TEST(TransformerInput, BadMoeFieldsNameTheField) {
  const std::pair<const char*, const char*> cases[] = {
      {" --set model.zoo.moe.top_k=5", "model.zoo.moe.top_k: at most moe.experts (4)"},
      {" --set model.zoo.moe.router_imbalance=0.5", "model.zoo.moe.router_imbalance"},
      {" --set model.zoo.moe.capacity_factor=0.5", "model.zoo.moe.capacity_factor"},
      {" --set training.expert_parallel=3", "training.expert_parallel"},
      {" --set model.zoo.moe.experts=6 --set training.expert_parallel=4"
       " --set training.data_parallel=4 --set training.global_batch=16",
       "training.expert_parallel: the 6 experts of each layer do not split over 4 GPUs"},
      {" --set model.zoo.kv_heads=3", "model.zoo.kv_heads"},
      {" --set model.zoo.name=gpt", "a Hugging Face config describes a transformer"},
  };
  for (const auto& [overrides, message] : cases) {
    const testing::CliResult r = simulate(kMixtral, overrides);
    EXPECT_EQ(r.exit_code, 2) << overrides << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr(message)) << overrides;
  }
}

TEST(TransformerInput, ExpertParallelismNeedsExperts) {
  std::string dense = kMixtral;
  dense.replace(dense.find("\"mixtral\""), 9, "\"llama\"");
  const testing::CliResult r = simulate(dense, " --set training.expert_parallel=2");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("training.expert_parallel: spreads the experts"));
}

}  // namespace
}  // namespace pipetwin
