// ZeRO on real LibTorch ranks: each replica keeps and updates a shard of every layer's
// optimizer state (stages 1 to 3), its gradients arrive by reduce-scatter, and its weights by
// all-gather after the update (1, 2) or around every pass (3). Sharded, the replicas must
// still train exactly as one process does.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "real_run_helpers.h"

namespace pipetwin {
namespace {

class ZeroRun : public ::testing::TestWithParam<std::string> {};

TEST_P(ZeroRun, EqualsTheSingleProcessReference) {
  SKIP_WITHOUT_TORCH();
  testing::expect_equals_reference(GetParam());
}

INSTANTIATE_TEST_SUITE_P(
    Stages, ZeroRun,
    ::testing::Values(
        // Two stages, two replicas, Adam: the distributed optimizer.
        "builtin:mlp-cpu-2rank --set training.data_parallel=2 --set cluster.gpus_per_node=4 "
        "--set training.zero_stage=1",
        // Three replicas of one stage (shards of unequal fill), a scatter per backward.
        "builtin:mlp-cpu-2rank --set training.data_parallel=3 --set schedule.stages=1 "
        "--set cluster.gpus_per_node=3 --set training.global_batch=48 "
        "--set training.zero_stage=2",
        // Full sharding under 1F1B, and under a split backward (W gathers nothing).
        "builtin:gpt-cpu-2rank --set training.data_parallel=2 --set cluster.gpus_per_node=4 "
        "--set training.zero_stage=3",
        "builtin:mlp-cpu-2rank --set training.data_parallel=2 --set cluster.gpus_per_node=4 "
        "--set schedule.kind=ZB_H1 --set training.zero_stage=3",
        // With tensor and sequence parallelism: each tensor rank's shards over the replicas of
        // its rank, the replicated norms' gradients summed over the tensor group first (after
        // the last backward for stage 1, after each for stage 3).
        "builtin:gpt-tp2-pp2-cpu --set cluster.gpus_per_node=8 --set training.data_parallel=2 "
        "--set training.global_batch=16 --set training.sequence_parallel=true "
        "--set training.zero_stage=1",
        "builtin:gpt-tp2-pp2-cpu --set cluster.gpus_per_node=8 --set training.data_parallel=2 "
        "--set training.global_batch=16 --set training.sequence_parallel=true "
        "--set training.zero_stage=3"),
    [](const auto& info) { return "case" + std::to_string(info.index); });

}  // namespace
}  // namespace pipetwin
