// Exact mode: SimGrid with dedicated per-pair links and CM02 without TCP effects
// reproduces the analytic executor's timestamps, instruction by instruction, to 1e-9
// relative, on random contention-free scenarios. This is the proof that the SimGrid model
// and the max-plus recurrence implement the same semantics.
#include <gtest/gtest.h>

#include <algorithm>

#include "random_setup.h"
#include "random_trials.h"
#include "same_times.h"
#include "sim/driver/build_program.h"
#include "sim/exec/analytic_executor.h"
#include "sim/simgrid/simgrid_executor.h"

namespace pipetwin {
namespace {

class SimgridExact : public ::testing::TestWithParam<proto::ScheduleKind> {};

TEST_P(SimgridExact, ReproducesAnalyticTimestampsOnRandomScenarios) {
  std::mt19937 rng(4242 + GetParam());
  for (int trial = 0; trial < testing::random_trials(60); ++trial) {
    ResolvedScenario setup = testing::random_setup(rng, GetParam());
    setup.simgrid.exact = true;
    // DualPipe's two copies of a stage may be pipeline neighbours (devices d and K-1-d), whose
    // link then carries their gradients' ALLREDUCE beside the transfers of the next stage's
    // backwards: contention, which SimGrid models and the analytic engine does not. Without
    // gradients the run is contention-free.
    if (GetParam() == proto::DUALPIPE) {
      for (ModelLayer& layer : setup.model.layers) layer.parameter_bytes = 0;
    }
    const Program program = build_program(setup);
    SCOPED_TRACE("trial " + std::to_string(trial) + ": " + std::to_string(program.size()) +
                 " instructions");
    testing::expect_same_times(program, run_analytic(program, setup.cluster),
                               run_simgrid(program, setup.cluster, setup.simgrid));
  }
}

// ZeRO's reduce-scatters and all-gathers, around passes and updates, run the same on both.
TEST(SimgridExactZero, ReproducesAnalyticTimestampsOnRandomShardedScenarios) {
  std::mt19937 rng(5151);
  for (int trial = 0; trial < testing::random_trials(24); ++trial) {
    const proto::ScheduleKind kinds[] = {
        proto::GPIPE, proto::ONE_F_ONE_B, proto::INTERLEAVED_ONE_F_ONE_B,
        proto::ZB_H1, proto::ZB_V,        proto::UMPIPE};
    ResolvedScenario setup = testing::random_setup(rng, kinds[trial % 6]);
    setup.simgrid.exact = true;
    setup.training.zero_stage = 1 + trial % 3;
    const Program program = build_program(setup);
    SCOPED_TRACE("trial " + std::to_string(trial) + ": ZeRO-" +
                 std::to_string(setup.training.zero_stage) + ", " +
                 proto::ScheduleKind_Name(setup.schedule.kind));
    testing::expect_same_times(program, run_analytic(program, setup.cluster),
                               run_simgrid(program, setup.cluster, setup.simgrid));
  }
}

// Gradient buckets start under the backward that fills them (a lead): SimGrid runs that
// backward in pieces and starts each bucket where the analytic walk does.
TEST(SimgridExactBuckets, ReproducesAnalyticTimestampsOnRandomBucketedScenarios) {
  std::mt19937 rng(6161);
  for (int trial = 0; trial < testing::random_trials(24); ++trial) {
    const proto::ScheduleKind kinds[] = {proto::GPIPE, proto::ONE_F_ONE_B,
                                         proto::INTERLEAVED_ONE_F_ONE_B, proto::ZB_H1,
                                         proto::PIPEDREAM_ASYNC};
    ResolvedScenario setup = testing::random_setup(rng, kinds[trial % 5]);
    setup.simgrid.exact = true;
    if (!is_asynchronous(setup.schedule.kind)) setup.training.zero_stage = trial % 3;
    int64_t gradients = 0;
    for (const ModelLayer& layer : setup.model.layers) gradients += layer.parameter_bytes;
    // From one bucket per layer to several per layer.
    setup.training.grad_bucket_bytes =
        std::max<int64_t>(1, gradients / std::uniform_int_distribution<int64_t>(2, 40)(rng));
    const Program program = build_program(setup);
    SCOPED_TRACE("trial " + std::to_string(trial) + ": " +
                 proto::ScheduleKind_Name(setup.schedule.kind) + ", ZeRO-" +
                 std::to_string(setup.training.zero_stage));
    testing::expect_same_times(program, run_analytic(program, setup.cluster),
                               run_simgrid(program, setup.cluster, setup.simgrid));
  }
}

INSTANTIATE_TEST_SUITE_P(Schedules, SimgridExact,
                         ::testing::Values(proto::GPIPE, proto::ONE_F_ONE_B,
                                           proto::INTERLEAVED_ONE_F_ONE_B, proto::UMPIPE,
                                           proto::ZB_H1, proto::ZB_H2, proto::ZB_V,
                                           proto::DUALPIPE),
                         [](const auto& info) { return proto::ScheduleKind_Name(info.param); });

}  // namespace
}  // namespace pipetwin
