// FreezePipe on real LibTorch ranks: layers freeze by the rule on measured gradients (or
// a fixed schedule), the pipeline is repartitioned, and the layers that change rank move
// there with their trained weights and optimizer state. Training must continue exactly as
// a single process that freezes the same layers at the same iterations.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "real_run_helpers.h"
#include "traces/timeline_proto_io.h"

namespace pipetwin {
namespace {

using testing::CliResult;
using ::testing::HasSubstr;
using testing::run_pipetwin;
using testing::TempDir;

using testing::expect_close;
using testing::real_run_json;

// Eight MLP layers on two ranks: freezing six of eight makes the model fit one stage
// (forward-only layers are cheap), so the pipeline compresses to 1 stage x 2 replicas.
std::string scenario(const std::string& optimizer, const std::string& freeze) {
  return "name: \"freeze-mlp\"\n"
         "cluster { preset: \"cpu-host\" gpus_per_node: 2 }\n"
         "model { zoo { name: \"mlp\" layers: 8 hidden: 256 input_dim: 128 output_dim: 32 "
         "efficiency: 0.5 } }\n"
         "training { global_batch: 64 microbatches: 4 iterations: 14 optimizer: " +
         optimizer +
         " }\n"
         "schedule { kind: ONE_F_ONE_B stages: 2 }\n" +
         freeze + "\n";
}

// Every migration sent exactly the bytes its MIGRATE instructions count, and something
// moved when the pipeline changed shape.
void expect_migrations_as_counted(const nlohmann::json& run) {
  bool moved = false;
  for (const auto& m : run["migrations"]) {
    EXPECT_EQ(m["bytes"].get<int64_t>(), m["model_bytes"].get<int64_t>());
    moved |= m["bytes"].get<int64_t>() > 0;
  }
  EXPECT_TRUE(moved);
}

class RealFreezeFixedSchedule : public ::testing::TestWithParam<std::string> {};

// A fixed schedule: 2 layers frozen from iteration 4, 6 from iteration 8. The losses of
// every iteration and the final weights equal the single-process reference, which is
// only possible if the moved layers arrived with their weights and optimizer state.
TEST_P(RealFreezeFixedSchedule, TrainingContinuesAcrossTheRepartition) {
  SKIP_WITHOUT_TORCH();
  const TempDir dir;
  const std::string path =
      dir.write("f.textproto", scenario(GetParam(),
                                        "freeze { at { iteration: 4 frozen_layers: 2 } "
                                        "at { iteration: 8 frozen_layers: 6 } }"))
          .string();
  const std::string timeline = (dir.path() / "run.timeline").string();
  const nlohmann::json run = real_run_json(path + " --timeline " + timeline);
  const nlohmann::json reference = real_run_json(path + " --reference");
  ASSERT_FALSE(run.empty());
  expect_close(run["losses"], reference["losses"], 1e-5);
  expect_close(run["layer_weight_sums"], reference["layer_weight_sums"], 1e-5);

  ASSERT_EQ(run["phases"].size(), 3u);
  const auto& last = run["phases"][2];
  EXPECT_EQ(last["first_iteration"], 8);
  EXPECT_EQ(last["frozen_layers"], 6);
  EXPECT_EQ(last["stages"], 1);
  EXPECT_EQ(last["data_parallel"], 2);
  expect_migrations_as_counted(run);

  // The measured timeline holds every iteration and says where the pipeline changed.
  const Timeline t = read_timeline_file(timeline);
  int32_t last_iteration = 0;
  for (const Span& s : t.spans) last_iteration = std::max(last_iteration, s.iteration);
  EXPECT_EQ(last_iteration, 13);
  std::vector<std::string> instants;
  for (const Instant& i : t.instants) instants.push_back(i.name);
  EXPECT_THAT(instants, ::testing::Contains("freeze 6 layers"));
  EXPECT_THAT(instants, ::testing::Contains("repartition 1 stages x 2 replicas"));
}

// Adam moves two moments and a step count per parameter, momentum one buffer.
INSTANTIATE_TEST_SUITE_P(Optimizers, RealFreezeFixedSchedule,
                         ::testing::Values("ADAM", "MOMENTUM", "SGD"));

// No source in the freeze block: the ranks freeze by the AutoFreeze rule on the gradients
// they measure. The freeze log they write, read back by a simulated run, gives the same
// freeze events and the same plans; and a reference that freezes at those events trains
// exactly like the pipeline did.
TEST(RealFreezeRule, FreezesOnMeasuredGradientsAsTheSimulatorWould) {
  SKIP_WITHOUT_TORCH();
  const TempDir dir;
  const std::string rule = "interval_iterations: 2 percentile: 50 max_fraction_per_step: 0.5";
  const std::string path =
      dir.write("rule.textproto", scenario("ADAM", "freeze { " + rule + " }")).string();
  const std::string log = (dir.path() / "run.freezelog").string();
  const nlohmann::json run = real_run_json(path + " --freeze-log " + log);
  ASSERT_FALSE(run.empty());
  ASSERT_FALSE(run["freeze_events"].empty()) << "nothing froze: the test would prove nothing";
  expect_migrations_as_counted(run);

  // The simulator, fed the measured gradients, decides the same.
  const std::string replay =
      dir.write("replay.textproto",
                scenario("ADAM", "freeze { " + rule + " log: \"run.freezelog\" }"))
          .string();
  const CliResult sim = run_pipetwin("simulate " + replay + " --json");
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  const nlohmann::json simulated = nlohmann::json::parse(sim.out);
  ASSERT_EQ(simulated["phases"].size(), run["phases"].size());
  for (size_t k = 0; k < run["phases"].size(); ++k) {
    for (const char* key :
         {"first_iteration", "frozen_layers", "stages", "data_parallel", "partition"}) {
      EXPECT_EQ(simulated["phases"][k][key], run["phases"][k][key]) << "phase " << k << " " << key;
    }
  }

  // A single process freezing at the same iterations trains the same.
  std::string at;
  for (const auto& e : run["freeze_events"]) {
    at += "at { iteration: " + std::to_string(e["iteration"].get<int>()) +
          " frozen_layers: " + std::to_string(e["frozen_layers"].get<int>()) + " } ";
  }
  const std::string fixed =
      dir.write("fixed.textproto", scenario("ADAM", "freeze { " + at + "}")).string();
  const nlohmann::json reference = real_run_json(fixed + " --reference");
  expect_close(run["losses"], reference["losses"], 1e-5);
  expect_close(run["layer_weight_sums"], reference["layer_weight_sums"], 1e-5);
}

// A freeze block without a source can only run for real: simulate says so, naming it.
TEST(RealFreezeRule, SimulateNeedsASource) {
  const TempDir dir;
  const std::string path =
      dir.write("rule.textproto", scenario("ADAM", "freeze { interval_iterations: 2 }")).string();
  const CliResult r = run_pipetwin("simulate " + path);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr(path + ":6"));
  EXPECT_THAT(r.err, HasSubstr("no source of freezing"));
}

}  // namespace
}  // namespace pipetwin
