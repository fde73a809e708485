// Exact mode: SimGrid with dedicated per-pair links and CM02 without TCP effects
// reproduces the analytic executor's timestamps, instruction by instruction, to 1e-9
// relative, on random contention-free scenarios. This is the proof that the SimGrid model
// and the max-plus recurrence implement the same semantics.
#include <gtest/gtest.h>

#include <cmath>

#include "random_setup.h"
#include "sim/exec/analytic_executor.h"
#include "sim/schedule/build_program.h"
#include "sim/simgrid/simgrid_executor.h"

namespace pipetwin {
namespace {

void expect_same_times(const Program& p, const ExecutionTimes& analytic, const ExecutionTimes& sg) {
  ASSERT_EQ(analytic.start_s.size(), sg.start_s.size());
  int mismatches = 0;
  for (int32_t i = 0; i < p.size() && mismatches < 5; ++i) {
    for (auto [a, b] : {std::pair{analytic.start_s[i], sg.start_s[i]},
                        std::pair{analytic.end_s[i], sg.end_s[i]}}) {
      if (std::abs(a - b) > 1e-9 * std::abs(a) + 1e-15) {
        ++mismatches;
        ADD_FAILURE() << p.describe(i) << ": analytic " << a << " simgrid " << b;
      }
    }
  }
}

class SimgridExact : public ::testing::TestWithParam<proto::ScheduleKind> {};

TEST_P(SimgridExact, ReproducesAnalyticTimestampsOnRandomScenarios) {
  std::mt19937 rng(4242 + GetParam());
  for (int trial = 0; trial < 60; ++trial) {
    ResolvedScenario setup = testing::random_setup(rng, GetParam());
    setup.simgrid.exact = true;
    const Program program = build_program(setup);
    SCOPED_TRACE("trial " + std::to_string(trial) + ": " + std::to_string(program.size()) +
                 " instructions");
    expect_same_times(program, run_analytic(program, setup.cluster),
                      run_simgrid(program, setup.cluster, setup.simgrid));
  }
}

INSTANTIATE_TEST_SUITE_P(Schedules, SimgridExact,
                         ::testing::Values(proto::GPIPE, proto::ONE_F_ONE_B,
                                           proto::INTERLEAVED_ONE_F_ONE_B, proto::UMPIPE),
                         [](const auto& info) { return proto::ScheduleKind_Name(info.param); });

}  // namespace
}  // namespace pipetwin
