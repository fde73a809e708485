// UMPIPE's stage plans alone: one per stage, each direction's sizes summing to the batch a
// replica trains on.
#include "sim/scenario/resolve_stage_plans.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

using ::testing::ElementsAre;
using ::testing::ThrowsMessage;

UnequalPlan resolve(const std::string& plans, int32_t data_parallel) {
  const LoadedScenario loaded = parse_scenario(
      "schedule { kind: UMPIPE stages: 2\n" + plans + "\n}", "u.textproto", ".", false, {});
  TrainingSpec training;
  training.global_batch = 16;
  training.data_parallel = data_parallel;
  return resolve_stage_plans(ScenarioChecker(loaded), loaded.scenario.schedule(), training);
}

TEST(ResolveStagePlans, SizesSumToTheReplicasBatch) {
  const UnequalPlan plan = resolve(
      "stage_plans { forward_sizes: [4, 4] backward_sizes: [8] }\n"
      "stage_plans { forward_sizes: [2, 6] backward_sizes: [3, 5] }",
      2);
  ASSERT_EQ(plan.stages.size(), 2u);
  EXPECT_THAT(plan.stages[0].forward_sizes, ElementsAre(4, 4));
  EXPECT_THAT(plan.stages[1].backward_sizes, ElementsAre(3, 5));
  EXPECT_THAT(
      [] {
        resolve(
            "stage_plans { forward_sizes: [8] backward_sizes: [8] }\n"
            "stage_plans { forward_sizes: [8] backward_sizes: [4, 2] }",
            2);
      },
      ThrowsMessage<InputError>(
          "u.textproto:3: schedule.stage_plans[1].backward_sizes: sizes sum to 6, not the "
          "replica's batch of 8"));
}

TEST(ResolveStagePlans, OnePlanPerStageWithBothDirections) {
  EXPECT_THAT([] { resolve("stage_plans { forward_sizes: [16] backward_sizes: [16] }", 1); },
              ThrowsMessage<InputError>("u.textproto:2: schedule.stage_plans: has 1 entries, "
                                        "expected one per stage (2)"));
  EXPECT_THAT(
      [] {
        resolve(
            "stage_plans { forward_sizes: [16] }\n"
            "stage_plans { forward_sizes: [16] backward_sizes: [16] }",
            1);
      },
      ThrowsMessage<InputError>("u.textproto:2: schedule.stage_plans[0].backward_sizes: "
                                "missing (required by UMPIPE)"));
}

}  // namespace
}  // namespace pipetwin
