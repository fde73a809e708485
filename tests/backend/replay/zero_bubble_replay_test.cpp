// The CUDA replay runs a zero-bubble schedule's BWD_INPUT and BWD_WEIGHT as compute ops,
// like BWD, and frees each split backward's stash whole when its BWD_WEIGHT ends: every
// block is allocated once and released once.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "backend/replay/replay_plan.h"
#include "backend/replay/stash_ledger.h"
#include "random_setup.h"
#include "sim/driver/build_program.h"

namespace pipetwin {
namespace {

TEST(ZeroBubbleReplay, SplitBackwardsAreComputeAndFreeTheirStashAtW) {
  std::mt19937 rng(21);
  const proto::ScheduleKind kinds[] = {proto::ZB_H1, proto::ZB_H2, proto::ZB_V, proto::DUALPIPE};
  for (int trial = 0; trial < 40; ++trial) {
    const proto::ScheduleKind kind = kinds[trial % 4];
    const ResolvedScenario setup = testing::random_setup(rng, kind);
    const Program p = build_program(setup);
    for (int32_t rank = 0; rank < p.num_devices; ++rank) {
      for (const bool flops : {false, true}) {
        const ReplayPlan plan = make_replay_plan(p, rank, {1e15, flops});
        const StashLedger ledger = stash_ledger(plan);
        std::set<int32_t> live, dead;
        for (size_t k : host_enqueue_order(plan)) {
          const ReplayOp& op = plan.ops[k];
          const Instruction& ins = p.instructions[op.instruction];
          if (ins.op == Op::kBwdInput || ins.op == Op::kBwdWeight) {
            EXPECT_EQ(op.kind, flops ? ReplayKind::kGemm : ReplayKind::kSpin);
            EXPECT_EQ(op.allocate_bytes, 0);
            EXPECT_EQ(op.free_bytes > 0, ins.op == Op::kBwdWeight) << p.describe(op.instruction);
          }
          for (const StashBlock& b : ledger.actions[k].allocate) {
            EXPECT_TRUE(live.insert(b.id).second && !dead.count(b.id));
          }
          for (const StashBlock& b : ledger.actions[k].release) {
            EXPECT_EQ(live.erase(b.id), 1u) << p.describe(op.instruction);
            dead.insert(b.id);
          }
        }
        EXPECT_TRUE(live.empty()) << proto::ScheduleKind_Name(kind) << " rank " << rank;
      }
    }
  }
}

}  // namespace
}  // namespace pipetwin
