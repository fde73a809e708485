// Lowering's transfer pass on tiny hand-built pipelines: a SEND/RECV pair per microbatch
// and cut, paired, with the activation bytes of its samples; the data dependencies
// between a pass, its transfers and its own stage's forward; plain dependencies between
// stages on one device; empty gradients into stages that train nothing; receives posted in
// production order when the schedule gives production times.
#include "sim/schedule/lowering_transfers.h"

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

Program lowered(const PipelineLayout& layout, const ComputeOrder& order,
                const ProductionTimes& production_times = {}) {
  const LoweringContext context(layout, false);
  ProgramBuilder builder(layout.num_devices, static_cast<int32_t>(layout.costs.size()), 1,
                         layout.global_batch);
  const LoweredCompute compute = add_compute(context, order, 1, builder);
  add_transfers(context, compute, builder, order, production_times);
  return std::move(builder).finish();
}

TEST(LoweringTransfers, EachCutGetsPairedTransfersAndDependencies) {
  const Program p = lowered(tiny_layout(2, 2), gpipe_order(2, 2));
  EXPECT_THAT(lane_text(p, 0, Lane::kSend), ElementsAre("0SEND_A0", "0SEND_A1"));
  EXPECT_THAT(lane_text(p, 1, Lane::kRecv), ElementsAre("1RECV_A0", "1RECV_A1"));
  EXPECT_THAT(lane_text(p, 1, Lane::kSend), ElementsAre("1SEND_G0", "1SEND_G1"));
  EXPECT_THAT(lane_text(p, 0, Lane::kRecv), ElementsAre("0RECV_G0", "0RECV_G1"));
  for (int32_t i = 0; i < p.size(); ++i) {
    const Instruction& x = p.instructions[i];
    if (!is_transfer(x.op)) continue;
    ASSERT_GE(p.partner[i], 0);
    EXPECT_EQ(p.instructions[p.partner[i]].op, partner_op(x.op));
    EXPECT_EQ(x.peer_device, 1 - x.device);
    EXPECT_EQ(x.bytes, 2 * 10);
  }
  // The SEND after its FWD; stage 1's FWD after the RECV; a BWD after the gradient and its
  // own stage's FWD.
  EXPECT_THAT(deps_text(p, at(p, 0, Lane::kSend, 1)), ElementsAre("0F1"));
  EXPECT_THAT(deps_text(p, at(p, 1, Lane::kCompute, 0)), ElementsAre("1RECV_A0"));
  EXPECT_THAT(deps_text(p, at(p, 0, Lane::kCompute, 3)), ElementsAre("0RECV_G1", "0F1"));
  EXPECT_THAT(deps_text(p, at(p, 1, Lane::kCompute, 2)), ElementsAre("1F0"));
}

TEST(LoweringTransfers, StagesOnOneDeviceNeedNoTransfer) {
  PipelineLayout layout = tiny_layout(2, 1);
  layout.num_devices = 1;
  layout.devices_per_replica = 1;
  layout.stage_device = {0, 0};
  layout.static_bytes = {0};
  const ComputeOrder order = {
      {{Op::kFwd, 0, 0}, {Op::kFwd, 1, 0}, {Op::kBwd, 1, 0}, {Op::kBwd, 0, 0}}};
  const Program p = lowered(layout, order);
  EXPECT_TRUE(lane_text(p, 0, Lane::kSend).empty());
  EXPECT_TRUE(lane_text(p, 0, Lane::kRecv).empty());
  EXPECT_THAT(deps_text(p, 1), ElementsAre("0F0"));
  EXPECT_THAT(deps_text(p, 3), ElementsAre("1B0", "0F0"));
}

TEST(LoweringTransfers, AGradientIntoAStageThatTrainsNothingIsEmpty) {
  PipelineLayout layout = tiny_layout(2, 1);
  layout.costs[0].trains = false;
  const Program p = lowered(layout, gpipe_order(2, 1));
  for (const Instruction& x : p.instructions) {
    if (x.op == Op::kSendAct) {
      EXPECT_EQ(x.bytes, 20);
    } else if (x.op == Op::kSendGrad) {
      EXPECT_EQ(x.bytes, 0);
    }
  }
}

TEST(LoweringTransfers, BackwardWeightWaitsForItsInputGradient) {
  const PipelineLayout layout = tiny_layout(1, 1);
  const ComputeOrder order = {{{Op::kFwd, 0, 0}, {Op::kBwdInput, 0, 0}, {Op::kBwdWeight, 0, 0}}};
  const Program p = lowered(layout, order);
  EXPECT_THAT(deps_text(p, 1), ElementsAre("0F0"));
  EXPECT_THAT(deps_text(p, 2), ElementsAre("0I0"));
}

// Device 1 consumes microbatch 1 before microbatch 0: its receives follow consumption, or
// with production times the order device 0 produces in.
TEST(LoweringTransfers, ProductionTimesOrderTheReceives) {
  const PipelineLayout layout = tiny_layout(2, 2);
  const ComputeOrder order = {
      {{Op::kFwd, 0, 0}, {Op::kFwd, 0, 1}, {Op::kBwd, 0, 1}, {Op::kBwd, 0, 0}},
      {{Op::kFwd, 1, 1}, {Op::kFwd, 1, 0}, {Op::kBwd, 1, 1}, {Op::kBwd, 1, 0}}};
  EXPECT_THAT(lane_text(lowered(layout, order), 1, Lane::kRecv),
              ElementsAre("1RECV_A1", "1RECV_A0"));
  const ProductionTimes times = {{1, 2, 7, 8}, {4, 5, 5, 6}};
  EXPECT_THAT(lane_text(lowered(layout, order, times), 1, Lane::kRecv),
              ElementsAre("1RECV_A0", "1RECV_A1"));
}

}  // namespace
}  // namespace pipetwin
