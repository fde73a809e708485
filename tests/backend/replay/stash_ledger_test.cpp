// The replay's device memory follows the Program: the blocks each op allocates and frees
// (stash_ledger.h) hold, at the simulated times, exactly the stash the simulators account,
// 1F1B's and GPipe's closed forms among them, offload included; and every block is
// allocated once and released once, after it was allocated.
#include "backend/replay/stash_ledger.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include "backend/replay/replay_plan.h"
#include "random_setup.h"
#include "sim/driver/build_program.h"
#include "sim/exec/analytic_executor.h"
#include "sim/exec/memory_curve.h"
#include "uniform_setup.h"

namespace pipetwin {
namespace {

int64_t peak_at_analytic_times(const Program& p, const ResolvedScenario& setup, int32_t rank) {
  const ReplayPlan plan = make_replay_plan(p, rank, {1e15, false});
  const ExecutionTimes times = run_analytic(p, setup.cluster);
  std::vector<double> start, end;
  for (const ReplayOp& op : plan.ops) {
    start.push_back(times.start_s[op.instruction]);
    end.push_back(times.end_s[op.instruction]);
  }
  return stash_peak(stash_ledger(plan), start, end);
}

void enable_offload(ResolvedScenario& setup, int horizon, double fraction) {
  setup.cluster.has_host_link = true;
  setup.cluster.host_link = {16e9, 1e-6};
  setup.cluster.host_memory_bytes = 1e18;
  setup.schedule.offload.enabled = true;
  setup.schedule.offload.prefetch_horizon = horizon;
  setup.schedule.offload.fraction = fraction;
  setup.schedule.offload.stages.clear();
  for (int s = 0; s < setup.schedule.chunks(); ++s) setup.schedule.offload.stages.push_back(s);
}

// 1F1B: stage s holds min(M, K - s) microbatches' stashes; GPipe holds all M.
TEST(StashLedger, ClosedFormsOfOneFOneBAndGPipe) {
  const int stages = 4, microbatches = 8;
  const int64_t per_microbatch = 4 * 100;  // samples x stash bytes per sample
  for (auto kind : {proto::ONE_F_ONE_B, proto::GPIPE}) {
    const ResolvedScenario setup = testing::uniform_setup(kind, stages, microbatches, 1e-3, 2e-3);
    const Program p = build_program(setup);
    for (int s = 0; s < stages; ++s) {
      const int held = kind == proto::GPIPE ? microbatches : std::min(microbatches, stages - s);
      EXPECT_EQ(peak_at_analytic_times(p, setup, s), held * per_microbatch)
          << proto::ScheduleKind_Name(kind) << " stage " << s;
    }
  }
}

// One device with offload (random horizons and fractions, so some stashes stay, some
// travel in part): the blocks' peak at the analytic times is memory_curve's, whose
// offload accounting the simulators share.
TEST(StashLedger, OffloadFollowsTheSimulatorsMemoryCurve) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 40; ++trial) {
    const auto kind = trial % 2 ? proto::GPIPE : proto::ONE_F_ONE_B;
    const int microbatches = std::uniform_int_distribution<int>(2, 12)(rng);
    ResolvedScenario setup = testing::uniform_setup(kind, 1, microbatches, 1e-3, 2e-3);
    enable_offload(setup, std::uniform_int_distribution<int>(0, 3)(rng),
                   std::uniform_real_distribution<double>(0.1, 1.0)(rng));
    const Program p = build_program(setup);
    const MemoryCurve curve = memory_curve(p, run_analytic(p, setup.cluster));
    EXPECT_EQ(peak_at_analytic_times(p, setup, 0), curve.peaks[0].bytes) << "trial " << trial;
  }
}

// Random pipelines, unequal microbatches and offload among them: every block is
// allocated once, released once, never before it was allocated (in the order the host
// enqueues), and an OFFLOAD releases and a RELOAD allocates exactly its bytes.
TEST(StashLedger, EveryBlockIsAllocatedAndReleasedOnce) {
  std::mt19937 rng(9);
  for (int trial = 0; trial < 40; ++trial) {
    ResolvedScenario setup =
        testing::random_setup(rng, trial % 3 ? proto::ONE_F_ONE_B : proto::GPIPE);
    if (trial % 2) enable_offload(setup, trial % 4, trial % 4 ? 0.5 : 1.0);
    const Program p = build_program(setup);
    for (int32_t rank = 0; rank < p.num_devices; ++rank) {
      const ReplayPlan plan = make_replay_plan(p, rank, {1e15, false});
      const StashLedger ledger = stash_ledger(plan);
      std::set<int32_t> live, dead;
      int64_t stashed = 0, freed = 0;
      for (size_t k : host_enqueue_order(plan)) {
        const ReplayOp& op = plan.ops[k];
        int64_t allocated = 0, released = 0;
        for (const StashBlock& b : ledger.actions[k].allocate) {
          EXPECT_TRUE(live.insert(b.id).second && !dead.count(b.id)) << p.describe(op.instruction);
          allocated += b.bytes;
        }
        for (const StashBlock& b : ledger.actions[k].release) {
          EXPECT_EQ(live.erase(b.id), 1u) << p.describe(op.instruction);
          dead.insert(b.id);
          released += b.bytes;
        }
        if (op.kind == ReplayKind::kToHost) {
          EXPECT_EQ(released, op.bytes);
        }
        if (op.kind == ReplayKind::kToDevice) {
          EXPECT_EQ(allocated, op.bytes);
        }
        stashed += op.allocate_bytes;
        freed += op.free_bytes;
      }
      // What the BWDs free is what the FWDs stashed: then nothing is left at the end.
      if (freed == stashed) {
        EXPECT_TRUE(live.empty()) << "rank " << rank;
      }
      EXPECT_EQ(static_cast<int32_t>(dead.size() + live.size()), ledger.blocks);
    }
  }
}

// Asynchronous pipelines offloading their weight stashes (and, every other trial, their
// activations): a reloaded version is a block from its reload's start to its last
// backward's end, so the blocks' peak at the analytic times is memory_curve's above the
// resident weights, on every rank; every block is released.
TEST(StashLedger, ReloadedWeightVersionsFollowTheSimulatorsMemoryCurve) {
  std::mt19937 rng(17);
  for (int trial = 0; trial < 30; ++trial) {
    const auto kind = trial % 2 ? proto::PIPEDREAM_ASYNC : proto::PIPEDREAM_2BW;
    const int stages = std::uniform_int_distribution<int>(2, 5)(rng);
    const int microbatches = std::uniform_int_distribution<int>(stages, 8)(rng);
    ResolvedScenario setup = testing::uniform_setup(kind, stages, microbatches, 1e-3, 2e-3);
    for (ModelLayer& layer : setup.model.layers) layer.parameter_bytes = 40000;
    setup.training.iterations = 3;
    enable_offload(setup, std::uniform_int_distribution<int>(0, 3)(rng), 1.0);
    setup.schedule.offload.weight_stashes = true;
    setup.schedule.offload.activations = trial % 4 < 2;
    const Program p = build_program(setup);
    const MemoryCurve curve = memory_curve(p, run_analytic(p, setup.cluster));
    for (int32_t rank = 0; rank < p.num_devices; ++rank) {
      EXPECT_EQ(peak_at_analytic_times(p, setup, rank),
                curve.peaks[rank].bytes - p.static_bytes[rank])
          << "trial " << trial << " rank " << rank;
      const StashLedger ledger = stash_ledger(make_replay_plan(p, rank, {1e15, false}));
      int64_t held = 0;
      for (const StashActions& act : ledger.actions) {
        for (const StashBlock& b : act.allocate) held += b.bytes;
        for (const StashBlock& b : act.release) held -= b.bytes;
      }
      EXPECT_EQ(held, 0) << "trial " << trial << " rank " << rank;
    }
  }
}

}  // namespace
}  // namespace pipetwin
