// PipeDream's replicated stages alone: one count per stage, on enough devices, with enough
// microbatches to go round, and with none of the features that place stages themselves.
#include "sim/scenario/resolve_stage_replicas.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

using ::testing::ElementsAre;

constexpr int kDevices = 6;

std::string error(const std::string& scenario, std::vector<int32_t>* replicas = nullptr) {
  const LoadedScenario loaded = parse_scenario(scenario, "r.textproto", ".", false, {});
  TrainingSpec training;
  training.global_batch = 16;
  training.microbatches = 4;
  training.data_parallel = loaded.scenario.training().data_parallel();
  try {
    const std::vector<int32_t> resolved =
        resolve_stage_replicas(ScenarioChecker(loaded), loaded.scenario, training, kDevices);
    if (replicas) *replicas = resolved;
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(ResolveStageReplicas, OneCountPerStageOnTheClustersDevices) {
  std::vector<int32_t> replicas = {-1};
  EXPECT_EQ(error("schedule { kind: GPIPE stages: 2 }", &replicas), "");
  EXPECT_TRUE(replicas.empty());  // no stage replicated
  EXPECT_EQ(error("schedule { kind: ONE_F_ONE_B stages: 2 stage_replicas: [4, 2] }", &replicas),
            "");
  EXPECT_THAT(replicas, ElementsAre(4, 2));
  EXPECT_EQ(error("schedule { kind: GPIPE stages: 2 stage_replicas: [4, 3] }"),
            "r.textproto:1: schedule.stage_replicas: places the stages on 7 devices, more than "
            "the cluster's 6");
  EXPECT_EQ(error("schedule { kind: GPIPE stages: 2 stage_replicas: [5, 1] }"),
            "r.textproto:1: schedule.stage_replicas[0]: 5 replicas of stage 0 need at least as "
            "many microbatches per iteration (training.microbatches is 4)");
}

TEST(ResolveStageReplicas, NotWithWholePipelineReplicasOrOtherKinds) {
  EXPECT_EQ(error("schedule { kind: GPIPE stages: 2 stage_replicas: [2, 1] }\n"
                  "training { data_parallel: 2 }"),
            "r.textproto:1: schedule.stage_replicas: cannot be combined with "
            "training.data_parallel (2): replicate single stages or whole pipelines, not both");
  EXPECT_EQ(error("schedule { kind: UMPIPE stages: 2 stage_replicas: [2, 1] }"),
            "r.textproto:1: schedule.stage_replicas: replicates stages of GPIPE, ONE_F_ONE_B, "
            "PIPEDREAM_ASYNC, PIPEDREAM_2BW and APAPO schedules, not UMPIPE");
}

}  // namespace
}  // namespace pipetwin
