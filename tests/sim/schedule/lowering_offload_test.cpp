// Lowering's offload pass on tiny hand-built pipelines: an OFFLOAD after each offloaded
// forward and its RELOAD issued h backwards ahead of the backward that needs it, with the
// offloaded fraction of the stash; no round trip for a stash needed right away; the weight
// version an asynchronous update overwrites copied out before it and back for the backward
// that still needs it; nothing at all without offload.
#include "sim/schedule/lowering_offload.h"

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

Program lowered(const PipelineLayout& layout, const ComputeOrder& order) {
  const LoweringContext context(layout, false);
  ProgramBuilder builder(layout.num_devices, static_cast<int32_t>(layout.costs.size()), 1,
                         layout.global_batch);
  const LoweredCompute compute = add_compute(context, order, 1, builder);
  add_offload(context, compute, builder);
  return std::move(builder).finish();
}

// GPipe's F0 F1 F2 B0 B1 B2 with horizon 1: every reload is issued one backward ahead, i.e.
// when the op before the previous backward ends (F2 for B0 and B1, B0 for B2).
TEST(LoweringOffload, ReloadsAreIssuedHorizonBackwardsAhead) {
  PipelineLayout layout = tiny_layout(1, 3);
  layout.offload_fraction = {0.5};
  layout.prefetch_horizon = 1;
  const Program p = lowered(layout, gpipe_order(1, 3));
  EXPECT_THAT(lane_text(p, 0, Lane::kCopy), ElementsAre("0OFFLOAD0", "0OFFLOAD1", "0OFFLOAD2",
                                                        "0RELOAD0", "0RELOAD1", "0RELOAD2"));
  for (int k = 0; k < 6; ++k) {
    EXPECT_EQ(p.instructions[at(p, 0, Lane::kCopy, k)].bytes, 100);  // half of 2 x 100
  }
  EXPECT_THAT(deps_text(p, at(p, 0, Lane::kCopy, 0)), ElementsAre("0F0"));
  EXPECT_THAT(deps_text(p, at(p, 0, Lane::kCopy, 3)), ElementsAre("0OFFLOAD0", "0F2"));
  EXPECT_THAT(deps_text(p, at(p, 0, Lane::kCopy, 4)), ElementsAre("0OFFLOAD1", "0F2"));
  EXPECT_THAT(deps_text(p, at(p, 0, Lane::kCopy, 5)), ElementsAre("0OFFLOAD2", "0B0"));
  EXPECT_THAT(deps_text(p, at(p, 0, Lane::kCompute, 4)), ElementsAre("0RELOAD1"));
}

// 1F1B's last stage runs each backward right after its forward: the reload would be due
// before the offload starts, so the stash stays.
TEST(LoweringOffload, AStashNeededRightAwayStays) {
  PipelineLayout layout = tiny_layout(2, 2);
  layout.offload_fraction = {0, 1};
  const Program p = lowered(layout, one_f_one_b_order(2, 2));
  EXPECT_TRUE(lane_text(p, 0, Lane::kCopy).empty());  // stage 0 offloads nothing
  EXPECT_TRUE(lane_text(p, 1, Lane::kCopy).empty());
}

TEST(LoweringOffload, WithoutOffloadNothingIsAdded) {
  const Program p = lowered(tiny_layout(1, 3), gpipe_order(1, 3));
  EXPECT_TRUE(lane_text(p, 0, Lane::kCopy).empty());
  EXPECT_TRUE(p.deps.empty());
}

// F0 F1 B0 OPT B1 OPT: the first update overwrites the version B1 still needs, so that
// version goes out before it and comes back for B1 once the update has ended (horizon 1
// alone would issue the reload after F1).
TEST(LoweringOffload, AnOverwrittenVersionStillNeededGoesToHostMemory) {
  PipelineLayout layout = tiny_layout(1, 2);
  layout.offload_fraction = {0};
  layout.offload_weight_stashes = {true};
  layout.prefetch_horizon = 1;
  const LoweringContext context(layout, true);
  ProgramBuilder builder(1, 1, 1, layout.global_batch);
  const RunOrder run = {{{0, {Op::kFwd, 0, 0}},
                         {0, {Op::kFwd, 0, 1}},
                         {0, {Op::kBwd, 0, 0}},
                         {0, {Op::kOptim, 0, 0}},
                         {0, {Op::kBwd, 0, 1}},
                         {0, {Op::kOptim, 0, 1}}}};
  const LoweredCompute compute = add_compute_run(context, run, 1, true, builder);
  add_offload(context, compute, builder);
  const Program p = std::move(builder).finish();
  EXPECT_THAT(lane_text(p, 0, Lane::kCopy), ElementsAre("0OFFLOAD_W0", "0RELOAD_W0"));
  EXPECT_EQ(p.instructions[at(p, 0, Lane::kCopy, 0)].bytes, 500);
  EXPECT_TRUE(p.deps_of(at(p, 0, Lane::kCopy, 0)).empty());  // version 0 exists from the start
  EXPECT_THAT(deps_text(p, at(p, 0, Lane::kCompute, 3)), ElementsAre("0OFFLOAD_W0"));
  EXPECT_THAT(deps_text(p, at(p, 0, Lane::kCopy, 1)), ElementsAre("0OFFLOAD_W0", "0OPT"));
  EXPECT_THAT(deps_text(p, at(p, 0, Lane::kCompute, 4)), ElementsAre("0RELOAD_W0"));
}

}  // namespace
}  // namespace pipetwin
