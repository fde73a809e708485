// Zero-bubble schedules on real LibTorch ranks: BWD_INPUT computes only the stage input's
// gradient and BWD_WEIGHT, later, the parameters' gradients through the same graph. The
// pipeline must still train exactly as one process does, on 2 to 4 stages; DualPipe's two
// copies of every stage as well.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "real_run_helpers.h"

namespace pipetwin {
namespace {

class ZeroBubbleRun : public ::testing::TestWithParam<std::string> {};

TEST_P(ZeroBubbleRun, EqualsTheSingleProcessReference) {
  SKIP_WITHOUT_TORCH();
  testing::expect_equals_reference(GetParam());
}

INSTANTIATE_TEST_SUITE_P(
    Schedules, ZeroBubbleRun,
    ::testing::Values(
        "builtin:mlp-cpu-2rank --set schedule.kind=ZB_H1",
        "builtin:mlp-cpu-2rank --set schedule.kind=ZB_H2",
        "builtin:mlp-cpu-2rank --set schedule.kind=ZB_V",
        "builtin:mlp-cpu-2rank --set schedule.kind=ZB_H1 --set schedule.stages=4 "
        "--set cluster.gpus_per_node=4",
        "builtin:mlp-cpu-2rank --set schedule.kind=ZB_H2 --set schedule.stages=3 "
        "--set cluster.gpus_per_node=4 --set training.microbatches=4",
        "builtin:mlp-cpu-2rank --set schedule.kind=ZB_V --set schedule.stages=4 "
        "--set cluster.gpus_per_node=4 --set model.zoo.layers=8",
        // Two replicas: each stage's ALLREDUCE waits for its last W.
        "builtin:mlp-cpu-2rank --set schedule.kind=ZB_H1 --set training.data_parallel=2 "
        "--set cluster.gpus_per_node=4",
        "builtin:gpt-cpu-2rank --set schedule.kind=ZB_H1",
        "builtin:gpt-cpu-2rank --set schedule.kind=ZB_H2 --set schedule.stages=3 "
        "--set cluster.gpus_per_node=4",
        "builtin:gpt-cpu-2rank --set schedule.kind=ZB_V",
        "builtin:gpt-cpu-2rank --set schedule.kind=ZB_V --set schedule.stages=3 "
        "--set cluster.gpus_per_node=4",
        // The automatic schedule, at twice 1F1B's memory: whatever order it picks trains alike.
        "builtin:mlp-cpu-2rank --set schedule.kind=ZB_AUTO --set schedule.stages=3 "
        "--set cluster.gpus_per_node=4 --set schedule.memory_limit_microbatches=6",
        // DualPipe: two copies of each stage, their gradients summed before the update.
        "builtin:mlp-cpu-2rank --set schedule.kind=DUALPIPE --set training.microbatches=4",
        "builtin:mlp-cpu-2rank --set schedule.kind=DUALPIPE --set schedule.stages=4 "
        "--set cluster.gpus_per_node=4 --set training.microbatches=8",
        "builtin:mlp-cpu-2rank --set schedule.kind=DUALPIPE --set training.data_parallel=2 "
        "--set cluster.gpus_per_node=4 --set training.microbatches=4",
        "builtin:gpt-cpu-2rank --set schedule.kind=DUALPIPE --set training.microbatches=4"),
    [](const auto& info) { return "case" + std::to_string(info.index); });

}  // namespace
}  // namespace pipetwin
