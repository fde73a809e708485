// Lowering's updates pass on tiny hand-built pipelines: with several holders of a stage's
// weights, one ALLREDUCE per holder of the stage's gradient bytes, after its last backward,
// grouped into one collective, and the OPTIM after it; with one holder, or a stage without
// gradients, none.
#include "sim/schedule/lowering_updates.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/schedule/lowering_compute.h"
#include "tiny_pipeline.h"

namespace pipetwin {
namespace {

using testing::at;
using testing::deps_text;
using ::testing::ElementsAre;
using testing::lane_text;
using testing::tiny_layout;

Program lowered(const PipelineLayout& layout, const ComputeOrder& order, int32_t iterations) {
  const LoweringContext context(layout, false);
  ProgramBuilder builder(layout.num_devices, static_cast<int32_t>(layout.costs.size()), iterations,
                         layout.global_batch);
  const LoweredCompute compute = add_compute(context, order, iterations, builder);
  add_updates(context, compute.updates, builder);
  return std::move(builder).finish();
}

TEST(LoweringUpdates, ReplicasAllReduceEachStageInOneCollective) {
  const Program p = lowered(tiny_layout(2, 2, 2), gpipe_order(2, 2), 2);
  ASSERT_EQ(p.num_groups(), 4);  // two stages, two iterations
  for (int32_t g = 0; g < p.num_groups(); ++g) {
    const auto members = p.members_of_group(g);
    ASSERT_EQ(members.size(), 2u);
    const int32_t stage = g % 2;
    EXPECT_EQ(p.instructions[members[0]].device, stage);      // replica 0
    EXPECT_EQ(p.instructions[members[1]].device, stage + 2);  // replica 1
    for (int32_t m : members) {
      const Instruction& reduce = p.instructions[m];
      EXPECT_EQ(reduce.op, Op::kAllreduce);
      EXPECT_EQ(reduce.bytes, 1000);
      EXPECT_EQ(reduce.compute_s, 0);
      EXPECT_EQ(reduce.iteration, g / 2);
      EXPECT_EQ(reduce.range, (reduce.device < 2 ? SampleRange{0, 4} : SampleRange{4, 8}));
    }
  }
  for (int d = 0; d < 4; ++d) {
    const std::string reduce = std::to_string(d % 2) + "AR";
    EXPECT_THAT(lane_text(p, d, Lane::kDataParallel), ElementsAre(reduce, reduce)) << d;
  }
  // Replica 1's stage 0 (device 2): the ALLREDUCE after the last BWD, the OPTIM after it.
  const int32_t reduce = at(p, 2, Lane::kDataParallel, 0);
  EXPECT_EQ(p.deps_of(reduce)[0], at(p, 2, Lane::kCompute, 3));
  EXPECT_THAT(deps_text(p, reduce), ElementsAre("0B3"));
  EXPECT_THAT(deps_text(p, at(p, 2, Lane::kCompute, 4)), ElementsAre("0AR"));
}

TEST(LoweringUpdates, OneHolderOrNoGradientsNeedNoCollective) {
  PipelineLayout frozen = tiny_layout(2, 2, 2);
  frozen.costs[0].gradient_bytes = 0;
  for (const PipelineLayout& layout : {tiny_layout(2, 2), frozen}) {
    const Program p = lowered(layout, gpipe_order(2, 2), 1);
    EXPECT_TRUE(lane_text(p, 0, Lane::kDataParallel).empty());
    // A synchronous update is ordered by its lane alone.
    EXPECT_TRUE(p.deps_of(at(p, 0, Lane::kCompute, 4)).empty());
  }
}

// DualPipe: two stages holding one model stage all-reduce their gradients together.
TEST(LoweringUpdates, StagesHoldingOneModelStageReduceTogether) {
  PipelineLayout layout = tiny_layout(2, 1);
  layout.model_stage = {0, 0};
  const Program p = lowered(layout, gpipe_order(2, 1), 1);
  ASSERT_EQ(p.num_groups(), 1);
  const auto members = p.members_of_group(0);
  ASSERT_EQ(members.size(), 2u);
  EXPECT_EQ(p.instructions[members[0]].stage, 0);
  EXPECT_EQ(p.instructions[members[1]].stage, 1);
}

// An asynchronous update without replicas waits for its BWD explicitly.
TEST(LoweringUpdates, AsynchronousUpdatesWaitForTheirBackward) {
  const PipelineLayout layout = tiny_layout(1, 1);
  const LoweringContext context(layout, true);
  ProgramBuilder builder(1, 1, 1, layout.global_batch);
  const RunOrder run = {{{0, {Op::kFwd, 0, 0}}, {0, {Op::kBwd, 0, 0}}, {0, {Op::kOptim, 0, 0}}}};
  const LoweredCompute compute = add_compute_run(context, run, 1, true, builder);
  add_updates(context, compute.updates, builder);
  const Program p = std::move(builder).finish();
  EXPECT_THAT(deps_text(p, 2), ElementsAre("0B0"));
  EXPECT_EQ(p.num_groups(), 0);
}

}  // namespace
}  // namespace pipetwin
