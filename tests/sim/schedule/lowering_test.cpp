// Lowering: a compute order and stage costs become a Program (its text form, one forward
// and one backward per stage and microbatch, one transfer per overlap of unequal ranges).
#include "sim/schedule/lowering.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/driver/build_program.h"
#include "sim/program/validate_program.h"
#include "sim/spec/errors.h"
#include "uniform_setup.h"

namespace pipetwin {
namespace {

using ::testing::ElementsAre;
using testing::uniform_setup;

std::vector<std::string> lane_text(const Program& p, int device, Lane lane) {
  std::vector<std::string> out;
  const int l = device * kLaneCount + static_cast<int>(lane);
  for (int i = p.lane_begin[l]; i < p.lane_begin[l + 1]; ++i) out.push_back(p.text(i));
  return out;
}

TEST(Lowering, OneFOneBTwoStagesTextForm) {
  const Program p = build_program(uniform_setup(proto::ONE_F_ONE_B, 2, 3, 1, 2));
  EXPECT_THAT(lane_text(p, 0, Lane::kCompute),
              ElementsAre("0F0", "0F1", "0B0", "0F2", "0B1", "0B2", "0OPT"));
  EXPECT_THAT(lane_text(p, 1, Lane::kCompute),
              ElementsAre("1F0", "1B0", "1F1", "1B1", "1F2", "1B2", "1OPT"));
  EXPECT_THAT(lane_text(p, 0, Lane::kSend), ElementsAre("0SEND_A0", "0SEND_A1", "0SEND_A2"));
  EXPECT_THAT(lane_text(p, 0, Lane::kRecv), ElementsAre("0RECV_G0", "0RECV_G1", "0RECV_G2"));
  EXPECT_THAT(lane_text(p, 1, Lane::kSend), ElementsAre("1SEND_G0", "1SEND_G1", "1SEND_G2"));
  EXPECT_THAT(lane_text(p, 1, Lane::kRecv), ElementsAre("1RECV_A0", "1RECV_A1", "1RECV_A2"));
}

TEST(Lowering, EveryStageAndMicrobatchHasOneForwardAndOneBackward) {
  for (auto kind : {proto::GPIPE, proto::ONE_F_ONE_B, proto::INTERLEAVED_ONE_F_ONE_B}) {
    const int K = 4, M = 8, v = kind == proto::INTERLEAVED_ONE_F_ONE_B ? 2 : 1;
    const Program p = build_program(uniform_setup(kind, K, M, 1, 2, v));
    std::map<std::tuple<int, int, Op>, int> count;
    for (const Instruction& i : p.instructions) {
      if (i.op == Op::kFwd || i.op == Op::kBwd) ++count[{i.stage, i.microbatch, i.op}];
    }
    EXPECT_EQ(static_cast<int>(count.size()), 2 * K * v * M);
    for (const auto& [key, n] : count) EXPECT_EQ(n, 1);
  }
}

TEST(Lowering, UnequalRangesGetOneTransferPerOverlap) {
  // Stage 0 cuts 12 samples as [0,4)[4,12); stage 1 as [0,6)[6,12): three pieces.
  PipelineLayout layout;
  layout.num_devices = 2;
  layout.global_batch = 12;
  layout.stage_device = {0, 1};
  layout.fwd_ranges = {{{0, 4}, {4, 12}}, {{0, 6}, {6, 12}}};
  layout.bwd_ranges = layout.fwd_ranges;
  StageCost cost;
  cost.fwd = CostCurve::linear(0, 1);
  cost.bwd = CostCurve::linear(0, 2);
  cost.output_bytes_per_sample = 10;
  layout.costs = {cost, cost};
  layout.static_bytes = {0, 0};
  const ComputeOrder order = {
      {{Op::kFwd, 0, 0}, {Op::kFwd, 0, 1}, {Op::kBwd, 0, 0}, {Op::kBwd, 0, 1}},
      {{Op::kFwd, 1, 0}, {Op::kFwd, 1, 1}, {Op::kBwd, 1, 0}, {Op::kBwd, 1, 1}}};
  const Program p = lower(layout, order, 1);
  validate_program(p);
  EXPECT_TRUE(p.show_ranges);
  EXPECT_THAT(lane_text(p, 0, Lane::kSend),
              ElementsAre("0SEND_A[0,4)", "0SEND_A[4,6)", "0SEND_A[6,12)"));
  EXPECT_THAT(lane_text(p, 1, Lane::kRecv),
              ElementsAre("1RECV_A[0,4)", "1RECV_A[4,6)", "1RECV_A[6,12)"));
  int64_t bytes = 0;
  for (const Instruction& i : p.instructions) {
    if (i.op == Op::kSendAct) bytes += i.bytes;
  }
  EXPECT_EQ(bytes, 12 * 10);  // every sample's activations cross exactly once
}

}  // namespace
}  // namespace pipetwin
