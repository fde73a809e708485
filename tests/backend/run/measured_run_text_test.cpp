// The one measured-run type (backend/common/measured_run.h) as a report shows it
// (backend/run/measured_run_text.h): the GPUs' figures, measured against modelled
// activations, a training run's migrations, losses around the warm-up, repeated runs.
#include "backend/run/measured_run_text.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "sim/driver/build_program.h"
#include "sim/scenario/loaded_scenario.h"
#include "sim/scenario/resolve_scenario.h"

namespace pipetwin {
namespace {

using ::testing::HasSubstr;

TEST(MeasuredRun, ARunOfOneProgramHasNeitherGpuNorFreezingParts) {
  const MeasuredRun run;
  EXPECT_FALSE(run.gpu.has_value());
  EXPECT_FALSE(run.freezing.has_value());
  EXPECT_TRUE(run.losses.empty());
}

TEST(MeasuredRun, GpuFiguresGoToJsonPerRankAndTheSharingNoteToText) {
  MeasuredRun run;
  GpuFigures& gpu = run.gpu.emplace();
  gpu.device_name = "Test GPU";
  gpu.memory = {{100, 200, 300, 1000}, {110, 210, 310, 1000}};
  gpu.shared_gpu_ranks = {1};
  const nlohmann::json j = gpu_json(*run.gpu);
  EXPECT_EQ(j["device"], "Test GPU");
  ASSERT_EQ(j["memory"].size(), 2u);
  EXPECT_EQ(j["memory"][1]["stash_peak_bytes"], 110);
  EXPECT_EQ(j["memory"][1]["peak_pool_bytes"], 210);
  EXPECT_EQ(j["memory"][0]["device_used_bytes"], 300);
  EXPECT_EQ(j["memory"][0]["device_total_bytes"], 1000);
  EXPECT_EQ(j["shared_gpu_ranks"], nlohmann::json({1}));
  std::ostringstream text;
  print_gpu(text, *run.gpu);
  EXPECT_THAT(text.str(), HasSubstr("gpu             Test GPU\n"));
  EXPECT_THAT(text.str(), HasSubstr("  rank 1 stash peak"));
  EXPECT_THAT(text.str(), HasSubstr("note: 1 rank(s) shared a GPU"));
}

TEST(MeasuredRun, MigrationsPairTheSentPayloadWithTheModelsBytes) {
  FreezingFigures freezing;
  freezing.migrations = {{4, 1000, 0.5}, {8, 300, 0.25}};
  freezing.migration_model_bytes = {1024, 256};
  const nlohmann::json j = migrations_json(freezing);
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["iteration"], 4);
  EXPECT_EQ(j[0]["bytes"], 1000);
  EXPECT_EQ(j[0]["model_bytes"], 1024);
  EXPECT_EQ(j[1]["seconds"], 0.25);
  EXPECT_EQ(j[1]["model_bytes"], 256);
}

TEST(MeasuredRun, LossesOfTheWarmUpComeBeforeABar) {
  std::ostringstream warm, cold;
  print_losses(warm, {3, 2, 1}, 1);
  print_losses(cold, {3, 2, 1}, 0);
  EXPECT_EQ(warm.str(), "losses          3 | 2 1\n");
  EXPECT_EQ(cold.str(), "losses          3 2 1\n");
}

// Measured stashes of twice the model's bytes: per stage, measured per sample is twice
// the Program's FWD stash per sample.
TEST(MeasuredRun, StashComparisonIsPerStageAndPerSample) {
  const ResolvedScenario setup = resolve_scenario(load_scenario("builtin:mlp-cpu-2rank", {}));
  const Program program = build_program(setup);
  MeasuredRun run;
  for (const Instruction& ins : program.instructions)
    run.stash_bytes.push_back(2 * ins.stash_bytes);
  const nlohmann::json j = stash_comparison(program, run);
  ASSERT_EQ(j.size(), 2u);
  for (const nlohmann::json& stage : j) {
    EXPECT_GT(stage["model"].get<double>(), 0);
    EXPECT_DOUBLE_EQ(stage["measured"].get<double>(), 2 * stage["model"].get<double>());
  }
}

TEST(MeasuredRun, RepeatedRunsReportTheMedianRunAndTheSpread) {
  const RepeatSummary summary = summarize_repeats({3.0, 1.0, 2.0});
  const nlohmann::json j = repeat_json(summary);
  EXPECT_EQ(j["runs"], 3);
  EXPECT_EQ(j["median_run"], 2);
  EXPECT_DOUBLE_EQ(j["median_s"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(j["spread"].get<double>(), (3.0 - 1.0) / 2.0);
  std::ostringstream text;
  print_repeat(text, summary);
  EXPECT_THAT(text.str(), HasSubstr("(run 3 reported above)"));
}

}  // namespace
}  // namespace pipetwin
