// Lowering's compute pass on tiny hand-built pipelines: the compute lanes in the schedule's
// order with each op's samples, duration and stash, an OPTIM per stage and device at each
// iteration's end (or where an asynchronous run puts it), and nothing else yet: no other
// lane, no dependency.
#include "sim/schedule/lowering_compute.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tiny_pipeline.h"

namespace pipetwin {
namespace {

using ::testing::ElementsAre;
using testing::lane_text;
using testing::tiny_layout;

TEST(LoweringCompute, LanesFollowTheOrderAndEachIterationEndsWithTheUpdates) {
  const PipelineLayout layout = tiny_layout(2, 2);
  const LoweringContext context(layout, false);
  ProgramBuilder builder(layout.num_devices, 2, 2, layout.global_batch);
  const LoweredCompute compute = add_compute(context, gpipe_order(2, 2), 2, builder);
  const Program p = std::move(builder).finish();
  EXPECT_THAT(lane_text(p, 0, Lane::kCompute),
              ElementsAre("0F0", "0F1", "0B0", "0B1", "0OPT", "0F0", "0F1", "0B0", "0B1", "0OPT"));
  EXPECT_THAT(lane_text(p, 1, Lane::kCompute),
              ElementsAre("1F0", "1F1", "1B0", "1B1", "1OPT", "1F0", "1F1", "1B0", "1B1", "1OPT"));
  EXPECT_TRUE(p.deps.empty());
  for (int d = 0; d < 2; ++d) {
    for (Lane lane :
         {Lane::kSend, Lane::kRecv, Lane::kCopy, Lane::kCollective, Lane::kDataParallel}) {
      EXPECT_TRUE(lane_text(p, d, lane).empty());
    }
  }
  for (const Instruction& i : p.instructions) {
    const SampleRange expected = {2 * i.microbatch, 2 * i.microbatch + 2};
    if (i.op == Op::kFwd) {
      EXPECT_EQ(i.compute_s, 1 + 2);
    } else if (i.op == Op::kBwd) {
      EXPECT_EQ(i.compute_s, 2 * 2);
    }
    if (i.op == Op::kOptim) {
      EXPECT_EQ(i.compute_s, 3);
      EXPECT_EQ(i.range, (SampleRange{0, 4}));
    } else {
      EXPECT_EQ(i.range, expected);
      EXPECT_EQ(i.stash_bytes, 200);
    }
  }
  // Two lanes per iteration, each update after the last backward of its stage's lane.
  ASSERT_EQ(compute.lanes.size(), 4u);
  ASSERT_EQ(compute.updates.size(), 4u);
  for (size_t k = 0; k < compute.updates.size(); ++k) {
    const UpdateSlot& u = compute.updates[k];
    const int32_t it = static_cast<int32_t>(k / 2), s = static_cast<int32_t>(k % 2);
    EXPECT_EQ(u.instruction.iteration, it);
    EXPECT_EQ(u.instruction.stage, s);
    EXPECT_EQ(u.gradients, compute.lanes[2 * it + s].steps.back().id);
    EXPECT_EQ(u.gradients, compute.ids[0][it].last_bwd[s][0]);
    EXPECT_FALSE(u.waits_for_gradients);
    EXPECT_EQ(u.collective, std::make_pair(it, s));
  }
}

// Data-parallel replicas take consecutive slices of the batch and number their
// microbatches after the previous replica's.
TEST(LoweringCompute, ReplicasTakeTheirSliceOfTheBatch) {
  const PipelineLayout layout = tiny_layout(2, 2, 2);
  const LoweringContext context(layout, false);
  ProgramBuilder builder(layout.num_devices, 2, 1, layout.global_batch);
  add_compute(context, gpipe_order(2, 2), 1, builder);
  const Program p = std::move(builder).finish();
  EXPECT_THAT(lane_text(p, 2, Lane::kCompute), ElementsAre("0F2", "0F3", "0B2", "0B3", "0OPT"));
  const Instruction& optim = p.instructions[testing::at(p, 3, Lane::kCompute, 4)];
  EXPECT_EQ(optim.op, Op::kOptim);
  EXPECT_EQ(optim.range, (SampleRange{4, 8}));
}

// A split backward frees the stash in two parts: BWD_WEIGHT what the weight gradients need,
// BWD_INPUT the rest.
TEST(LoweringCompute, SplitBackwardsShareTheStash) {
  PipelineLayout layout = tiny_layout(1, 1);
  layout.costs[0].bwd_input = CostCurve::linear(0, 1.5);
  layout.costs[0].bwd_weight = CostCurve::linear(0, 0.5);
  layout.costs[0].bwd_weight_stash_bytes_per_sample = 30;
  const LoweringContext context(layout, false);
  ProgramBuilder builder(1, 1, 1, layout.global_batch);
  const ComputeOrder order = {{{Op::kFwd, 0, 0}, {Op::kBwdInput, 0, 0}, {Op::kBwdWeight, 0, 0}}};
  const LoweredCompute compute = add_compute(context, order, 1, builder);
  const Program p = std::move(builder).finish();
  EXPECT_THAT(lane_text(p, 0, Lane::kCompute), ElementsAre("0F0", "0I0", "0W0", "0OPT"));
  EXPECT_EQ(p.instructions[1].stash_bytes, 140);
  EXPECT_EQ(p.instructions[2].stash_bytes, 60);
  EXPECT_EQ(p.instructions[1].compute_s, 3);
  EXPECT_EQ(p.instructions[2].compute_s, 1);
  // The update waits for the weight gradients.
  EXPECT_EQ(compute.updates[0].gradients, compute.ids[0][0].bwd_weight[0][0]);
}

// An asynchronous run keeps its OPTIMs where the order puts them; each waits for the BWD it
// follows, and with an update per microbatch covers that microbatch's samples.
TEST(LoweringCompute, AsynchronousUpdatesStayInPlace) {
  const PipelineLayout layout = tiny_layout(1, 2);
  const LoweringContext context(layout, true);
  const RunOrder run = {{{0, {Op::kFwd, 0, 0}},
                         {0, {Op::kFwd, 0, 1}},
                         {0, {Op::kBwd, 0, 0}},
                         {0, {Op::kOptim, 0, 0}},
                         {0, {Op::kBwd, 0, 1}},
                         {0, {Op::kOptim, 0, 1}}}};
  for (bool every_microbatch : {true, false}) {
    ProgramBuilder builder(1, 1, 1, layout.global_batch);
    const LoweredCompute compute = add_compute_run(context, run, 1, every_microbatch, builder);
    const Program p = std::move(builder).finish();
    EXPECT_THAT(lane_text(p, 0, Lane::kCompute),
                ElementsAre("0F0", "0F1", "0B0", "0OPT", "0B1", "0OPT"));
    EXPECT_EQ(p.instructions[3].range, (every_microbatch ? SampleRange{0, 2} : SampleRange{0, 4}));
    EXPECT_EQ(p.instructions[5].range, (every_microbatch ? SampleRange{2, 4} : SampleRange{0, 4}));
    ASSERT_EQ(compute.updates.size(), 2u);
    for (int k = 0; k < 2; ++k) {
      EXPECT_TRUE(compute.updates[k].waits_for_gradients);
      EXPECT_EQ(compute.updates[k].gradients, compute.ids[0][0].bwd[0][k]);
      EXPECT_EQ(compute.updates[k].collective, std::make_pair(0, k));
    }
    ASSERT_EQ(compute.lanes.size(), 1u);
    EXPECT_EQ(compute.lanes[0].steps.size(), 6u);  // the OPTIMs too
  }
}

}  // namespace
}  // namespace pipetwin
