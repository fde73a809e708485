// schedule.offload alone: which stages offload under each policy, and what it needs of the
// cluster and the schedule.
#include "sim/scenario/resolve_offload.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

using ::testing::ElementsAre;

constexpr int32_t kChunks = 4;

ClusterSpec with_host_link() {
  ClusterSpec cluster;
  cluster.has_host_link = true;
  return cluster;
}

OffloadSpec resolve(const std::string& schedule, const ClusterSpec& cluster = with_host_link()) {
  const LoadedScenario loaded =
      parse_scenario("schedule {\n" + schedule + "\n}", "o.textproto", ".", false, {});
  return resolve_offload(ScenarioChecker(loaded), loaded.scenario.schedule(), kChunks, cluster);
}

std::string error(const std::string& schedule, const ClusterSpec& cluster = with_host_link()) {
  try {
    resolve(schedule, cluster);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(ResolveOffload, ThePolicyChoosesTheStages) {
  EXPECT_FALSE(resolve("kind: GPIPE").enabled);
  const OffloadSpec all = resolve("kind: GPIPE offload { fraction: 0.5 }");
  EXPECT_TRUE(all.enabled);
  EXPECT_DOUBLE_EQ(all.fraction, 0.5);
  EXPECT_THAT(all.stages, ElementsAre(0, 1, 2, 3));
  // Listed stages come sorted and once each.
  EXPECT_THAT(resolve("kind: GPIPE offload { policy: STAGES stages: [3, 1, 3] }").stages,
              ElementsAre(1, 3));
}

TEST(ResolveOffload, ErrorsNameTheField) {
  EXPECT_EQ(error("kind: GPIPE offload { }", ClusterSpec{}),
            "o.textproto:2: schedule.offload: offload copies over cluster.host_link, which is "
            "missing");
  EXPECT_EQ(error("kind: GPIPE offload { policy: STAGES stages: [4] }"),
            "o.textproto:2: schedule.offload.stages[0]: no stage 4 in a pipeline of 4 stages");
  EXPECT_EQ(error("kind: GPIPE offload { stages: [1] }"),
            "o.textproto:2: schedule.offload.stages: only policy STAGES takes a list of stages");
  EXPECT_EQ(error("kind: GPIPE offload { fraction: 0 }"),
            "o.textproto:2: schedule.offload.fraction: must be in (0, 1] (got 0)");
  EXPECT_EQ(error("kind: GPIPE offload { weight_stashes: true }"),
            "o.textproto:2: schedule.offload.weight_stashes: only asynchronous pipelines "
            "(PIPEDREAM_ASYNC, PIPEDREAM_2BW, APAPO) stash weight versions; GPIPE keeps one");
}

}  // namespace
}  // namespace pipetwin
