// Asynchronous pipelines on real LibTorch ranks, with weight stashing and data-parallel
// replicas: each forward runs with the weight version current when it started and keeps it
// until its backward; the update applies those gradients to the latest weights. The losses
// and trained weights must equal a single process that uses, for every microbatch and
// stage, the version the Program plans (run --reference does that for asynchronous
// schedules).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "real_run_helpers.h"

namespace pipetwin {
namespace {

using testing::CliResult;
using testing::expect_close;
using testing::run_pipetwin;

nlohmann::json run_json(const std::string& args) {
  const CliResult r =
      run_pipetwin("run builtin:mlp-cpu-2rank --set training.iterations=4 " + args + " --json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json{};
}

class RealAsync : public ::testing::TestWithParam<std::string> {};

TEST_P(RealAsync, EqualsTheStaleWeightsReference) {
  SKIP_WITHOUT_TORCH();
  const nlohmann::json pipeline = run_json(GetParam());
  const nlohmann::json reference = run_json(GetParam() + " --reference");
  ASSERT_FALSE(pipeline.empty());
  EXPECT_TRUE(pipeline["forward_versions_as_planned"].get<bool>());
  expect_close(pipeline["losses"], reference["losses"], 1e-5);
  expect_close(pipeline["layer_weight_sums"], reference["layer_weight_sums"], 1e-5);
}

INSTANTIATE_TEST_SUITE_P(
    Schedules, RealAsync,
    ::testing::Values("--set schedule.kind=PIPEDREAM_2BW --set training.microbatches=4",
                      "--set schedule.kind=PIPEDREAM_ASYNC --set training.microbatches=4",
                      "--set schedule.kind=APAPO --set schedule.max_staleness=1",
                      // Two replicas of the two-stage pipeline, all-reducing before updates.
                      "--set schedule.kind=PIPEDREAM_ASYNC --set training.microbatches=4 "
                      "--set training.data_parallel=2 --set cluster.gpus_per_node=4",
                      "--set schedule.kind=PIPEDREAM_2BW --set training.microbatches=4 "
                      "--set training.data_parallel=2 --set cluster.gpus_per_node=4",
                      // Blocking point-to-point: transfers hold the compute lane.
                      "--set schedule.kind=PIPEDREAM_2BW --set training.microbatches=4 "
                      "--set schedule.comm_overlap=false"));

// 2BW's updates use gradients computed with the weights one version behind: some
// microbatches run on the previous version, so the training differs from synchronous 1F1B
// after the first update, though the first iteration (before any update) is the same.
TEST(RealAsync, TwoBwUpdatesUseTheWeightsOneVersionBehind) {
  SKIP_WITHOUT_TORCH();
  const nlohmann::json two_bw =
      run_json("--set schedule.kind=PIPEDREAM_2BW --set training.microbatches=4");
  const nlohmann::json sync =
      run_json("--set schedule.kind=ONE_F_ONE_B --set training.microbatches=4 --reference");
  ASSERT_FALSE(two_bw.empty());
  EXPECT_EQ(two_bw["weight_staleness"]["max"], 1);
  EXPECT_GT(two_bw["weight_staleness"]["mean"].get<double>(), 0);
  EXPECT_NEAR(two_bw["losses"][0].get<double>(), sync["losses"][0].get<double>(), 1e-6);
  double largest = 0;
  for (size_t it = 1; it < sync["losses"].size(); ++it) {
    largest = std::max(
        largest, std::abs(two_bw["losses"][it].get<double>() - sync["losses"][it].get<double>()));
  }
  EXPECT_GT(largest, 1e-5) << "stale weights changed nothing: the test would prove nothing";
}

}  // namespace
}  // namespace pipetwin
