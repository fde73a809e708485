// The SimGrid engine's ring all-reduce, aggregated (one flow per member carrying all of its
// rounds, the rounds' latencies added) against the step-by-step model (2(D-1) lock-step
// rounds of D flows): under contention, with pipeline transfers sharing the links, on one
// node and across two, they agree within 1%. (Without contention both equal the closed
// form: tests/sim/network/ring_allreduce_test.cpp.)
#include <gtest/gtest.h>

#include <algorithm>

#include "sim/driver/build_program.h"
#include "sim/scenario/resolve_scenario.h"
#include "sim/simgrid/simgrid_executor.h"

namespace pipetwin {
namespace {

struct Totals {
  double makespan_s = 0;
  double allreduce_s = 0;  // summed over every member of every all-reduce
};

Totals simulate(const Program& program, const ResolvedScenario& setup, bool steps) {
  SimgridSettings settings = setup.simgrid;
  settings.collective_steps = steps;
  const ExecutionTimes t = run_simgrid(program, setup.cluster, settings);
  Totals totals;
  totals.makespan_s = *std::max_element(t.end_s.begin(), t.end_s.end());
  for (int32_t i = 0; i < program.size(); ++i) {
    if (program.instructions[i].op == Op::kAllreduce)
      totals.allreduce_s += t.end_s[i] - t.start_s[i];
  }
  return totals;
}

TEST(RingCollective, AggregatedAgreesWithStepByStepUnderContention) {
  const std::string gpt = PIPETWIN_SOURCE_DIR "/scenarios/gpt-8gpu-1f1b.textproto";
  const std::vector<std::vector<std::string>> cases = {
      // 2 replicas of 4 stages on one NVSwitch node: rings and pipeline transfers share ports.
      {"schedule.stages=4", "training.data_parallel=2", "training.microbatches=8"},
      // 4 replicas of 4 stages on two nodes: every ring crosses the NICs.
      {"cluster.nodes=2", "schedule.stages=4", "training.data_parallel=4",
       "training.global_batch=128", "training.microbatches=8"},
  };
  for (const auto& overrides : cases) {
    const ResolvedScenario setup = resolve_scenario(load_scenario(gpt, overrides));
    const Program program = build_program(setup);
    const Totals aggregated = simulate(program, setup, false);
    const Totals steps = simulate(program, setup, true);
    SCOPED_TRACE(overrides[0] + " " + overrides[1]);
    EXPECT_GT(aggregated.allreduce_s, 0);
    EXPECT_NEAR(aggregated.makespan_s, steps.makespan_s, 0.01 * steps.makespan_s);
    EXPECT_NEAR(aggregated.allreduce_s, steps.allreduce_s, 0.01 * steps.allreduce_s);
  }
}

}  // namespace
}  // namespace pipetwin
