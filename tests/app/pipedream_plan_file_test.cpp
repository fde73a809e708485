// `plan --search pipedream --write-plan FILE` with replication: the file holds the plan's
// stage_replicas, partition and PipeDream's asynchronous schedule, and `simulate` of it
// runs at the steady-state throughput the planner predicted, within 5%, on every shipped
// PipeDream-profile scenario.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_runner.h"

namespace pipetwin {
namespace {

std::string scenario_path(const std::string& name) {
  return std::string(PIPETWIN_SOURCE_DIR) + "/scenarios/" + name + ".textproto";
}

// The bottleneck the planner wrote into the file's header, seconds per microbatch.
double written_bottleneck(const std::string& text) {
  const std::string marker = "bottleneck ";
  const size_t at = text.find(marker);
  return at == std::string::npos ? 0 : std::stod(text.substr(at + marker.size()));
}

class WrittenReplicatedPlan : public ::testing::TestWithParam<const char*> {};

TEST_P(WrittenReplicatedPlan, SimulatesAtThePredictedThroughput) {
  testing::TempDir dir;
  const std::string plan = (dir.path() / "plan.textproto").string();
  const testing::CliResult r = testing::run_pipetwin("plan " + scenario_path(GetParam()) +
                                                     " --search pipedream --write-plan " + plan);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string text = testing::read_all(plan);
  EXPECT_NE(text.find("kind: PIPEDREAM_ASYNC"), std::string::npos) << text;
  EXPECT_NE(text.find("stage_replicas"), std::string::npos) << text;
  EXPECT_NE(text.find("partition"), std::string::npos) << text;
  const double predicted = written_bottleneck(text);
  ASSERT_GT(predicted, 0) << text;

  // Enough iterations that the fill and drain no longer count (one microbatch is one
  // minibatch: the steady state's time per iteration over M is the time per microbatch).
  const testing::CliResult sim =
      testing::run_pipetwin("simulate " + plan + " --set training.iterations=100 --json");
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  const nlohmann::json report = nlohmann::json::parse(sim.out);
  const double per_microbatch =
      report["steady_state_iteration_s"].get<double>() / report["microbatches"].get<double>();
  EXPECT_NEAR(per_microbatch, predicted, 0.05 * predicted) << GetParam();
  EXPECT_FALSE(report["out_of_memory"].get<bool>());
}

INSTANTIATE_TEST_SUITE_P(PipedreamProfiles, WrittenReplicatedPlan,
                         ::testing::Values("alexnet-pipedream-4gpu", "vgg16-pipedream-4gpu",
                                           "gnmt-pipedream-8gpu", "resnet50-pipedream-16gpu"),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name) c = c == '-' ? '_' : c;
                           return name;
                         });

// A plan that cuts the DAG between branches (GNMT, ResNet-50) becomes the best contiguous
// plan, still replicated; stderr says so with both bottlenecks.
TEST(WrittenReplicatedPlanNotes, NonContiguousPlanFallsBackToTheBestContiguousOne) {
  testing::TempDir dir;
  const std::string plan = (dir.path() / "plan.textproto").string();
  const testing::CliResult r = testing::run_pipetwin(
      "plan " + scenario_path("gnmt-pipedream-8gpu") + " --search pipedream --write-plan " + plan);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("best contiguous plan"), std::string::npos) << r.err;
  EXPECT_NE(testing::read_all(plan).find("stage_replicas"), std::string::npos);
}

// --straight plans replicate nothing: the file keeps 1F1B and no stage_replicas.
TEST(WrittenReplicatedPlanNotes, StraightPlanStaysSynchronous) {
  testing::TempDir dir;
  const std::string plan = (dir.path() / "plan.textproto").string();
  const testing::CliResult r =
      testing::run_pipetwin("plan " + scenario_path("alexnet-pipedream-4gpu") +
                            " --search pipedream --straight --write-plan " + plan);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string text = testing::read_all(plan);
  EXPECT_NE(text.find("kind: ONE_F_ONE_B"), std::string::npos) << text;
  EXPECT_EQ(text.find("stage_replicas"), std::string::npos) << text;
}

}  // namespace
}  // namespace pipetwin
