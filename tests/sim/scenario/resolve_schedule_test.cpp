// The schedule section alone, against a given training section, model size and cluster size:
// virtual stages, what each kind asks of the training section, the partition of layers.
#include "sim/scenario/resolve_schedule.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

using ::testing::ElementsAre;

constexpr int kLayers = 8;
constexpr int kDevices = 4;

TrainingSpec training(int32_t microbatches) {
  TrainingSpec t;
  t.global_batch = 64;
  t.microbatches = microbatches;
  return t;
}

// The schedule written on line 1, resolved (a training section left unwritten has no line).
ScheduleSpec resolve(const std::string& schedule, int32_t microbatches = 8) {
  const LoadedScenario loaded =
      parse_scenario("schedule { " + schedule + " }", "s.textproto", ".", false, {});
  return resolve_schedule(ScenarioChecker(loaded), loaded.scenario, kLayers, kDevices,
                          training(microbatches));
}

std::string error(const std::string& schedule, int32_t microbatches = 8) {
  try {
    resolve(schedule, microbatches);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(ResolveSchedule, VirtualStagesMakeChunks) {
  const ScheduleSpec interleaved =
      resolve("kind: INTERLEAVED_ONE_F_ONE_B stages: 4 virtual_stages: 2");
  EXPECT_EQ(interleaved.chunks(), 8);
  const ScheduleSpec v = resolve("kind: ZB_V stages: 2");
  EXPECT_EQ(v.virtual_stages, 2);  // ZB_V's V, whether written or not
  EXPECT_EQ(error("kind: ZB_V stages: 2 virtual_stages: 3"),
            "s.textproto:1: schedule.virtual_stages: ZB_V places two model chunks on every "
            "device: leave it unset or give 2, got 3");
  EXPECT_EQ(error("kind: GPIPE stages: 2 virtual_stages: 2"),
            "s.textproto:1: schedule.virtual_stages: only INTERLEAVED_ONE_F_ONE_B and ZB_V have "
            "virtual stages");
}

TEST(ResolveSchedule, KindsAskTheirOwnOfTheTrainingSection) {
  EXPECT_EQ(error("kind: INTERLEAVED_ONE_F_ONE_B stages: 4", 6),
            "s.textproto: training.microbatches: interleaved 1F1B needs microbatches (6) to be "
            "a multiple of schedule.stages (4)");
  EXPECT_EQ(error("kind: DUALPIPE stages: 3"),
            "s.textproto:1: schedule.stages: DUALPIPE runs its two directions over an even "
            "number of stages, got 3");
  EXPECT_EQ(error("kind: DUALPIPE stages: 4", 6),
            "s.textproto: training.microbatches: DUALPIPE needs an even number of "
            "microbatches, at least twice schedule.stages (8), got 6");
  EXPECT_EQ(error("kind: GPIPE stages: 8"),
            "s.textproto:1: schedule.stages: 8 stages need more devices than the cluster's 4");
}

TEST(ResolveSchedule, ThePartitionPlacesEveryLayer) {
  EXPECT_THAT(resolve("kind: GPIPE stages: 2 partition: [3, 5]").partition, ElementsAre(3, 5));
  EXPECT_EQ(error("kind: GPIPE stages: 2 partition: [3, 4]"),
            "s.textproto:1: schedule.partition: places 7 layers, but the model has 8");
  EXPECT_EQ(error("kind: GPIPE stages: 2 partition: [8]"),
            "s.textproto:1: schedule.partition: has 1 entries, expected one per stage (2)");
}

}  // namespace
}  // namespace pipetwin
