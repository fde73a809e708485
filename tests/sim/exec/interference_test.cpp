// cluster.interference: closed forms of the fixed point, no effect without it, and the
// simgrid engine in exact mode giving the analytic engine's times with it.
#include "sim/exec/interference.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "same_times.h"
#include "sim/driver/build_program.h"
#include "sim/exec/analytic_executor.h"
#include "sim/scenario/loaded_scenario.h"
#include "sim/scenario/resolve_scenario.h"
#include "sim/simgrid/simgrid_executor.h"
#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

// Two stages of one layer, GPipe, two microbatches of one sample: stage 0's second
// forward (10 ms) runs while the first microbatch's activations (2 ms) leave.
std::string two_stage_text(double compute_slowdown, double transfer_slowdown) {
  return "name: 'two' cluster { nodes: 1 gpus_per_node: 2 gpu { name: 'g' peak_tflops: 1 "
         "memory_gib: 1 } intra_node { bandwidth_gbytes_per_s: 1 latency_us: 0 } "
         "interference { compute_slowdown: " +
         std::to_string(compute_slowdown) +
         " transfer_slowdown: " + std::to_string(transfer_slowdown) +
         " } } model { layers { name: 'a' fwd_ms: 10 bwd_ms: 20 activation_bytes: 2000000 } "
         "layers { name: 'b' fwd_ms: 10 bwd_ms: 20 } } training { global_batch: 2 "
         "microbatches: 2 optimizer: SGD } schedule { kind: GPIPE stages: 2 }";
}

ResolvedScenario resolved(const std::string& text) {
  return resolve_scenario(parse_scenario(text, "two.textproto", ".", false, {}));
}

int32_t find(const Program& p, const std::string& text) {
  for (int32_t i = 0; i < p.size(); ++i) {
    if (p.text(i) == text) return i;
  }
  ADD_FAILURE() << "no instruction " << text;
  return 0;
}

TEST(Interference, ClosedFormOfOneOverlap) {
  const double alpha = 0.3, beta = 0.25;
  const ResolvedScenario setup = resolved(two_stage_text(alpha, beta));
  Program program = build_program(setup);
  const InterferenceFixedPoint fixed = apply_interference(program, setup.cluster);
  EXPECT_LT(fixed.last_change_s, 1e-11);
  const ExecutionTimes times = run_analytic(program, setup.cluster);
  // The send (2 ms alone) overlaps 0F1 all along: t = 2 ms + beta t, so t = 2 ms / (1 - beta);
  // 0F1 overlaps it for t: 10 ms + alpha t.
  const double send = 2e-3 / (1 - beta);
  const int32_t s = find(program, "0SEND_A0"), f = find(program, "0F1");
  EXPECT_NEAR(times.end_s[s] - times.start_s[s], send, 1e-10);
  EXPECT_NEAR(times.end_s[f] - times.start_s[f], 10e-3 + alpha * send, 1e-10);
  // The receiving end carries the same delay; the first forward overlapped nothing.
  EXPECT_DOUBLE_EQ(program.instructions[find(program, "1RECV_A0")].interference_s,
                   program.instructions[s].interference_s);
  EXPECT_EQ(program.instructions[find(program, "0F0")].interference_s, 0);
}

TEST(Interference, NoneLeavesEveryTimeAsItWas) {
  const ResolvedScenario setup = resolved(two_stage_text(0, 0));
  Program program = build_program(setup);
  const ExecutionTimes before = run_analytic(program, setup.cluster);
  EXPECT_EQ(apply_interference(program, setup.cluster).rounds, 0);
  const ExecutionTimes after = run_analytic(program, setup.cluster);
  EXPECT_EQ(before.start_s, after.start_s);
  EXPECT_EQ(before.end_s, after.end_s);
}

TEST(Interference, SimgridExactGivesTheAnalyticTimes) {
  const ResolvedScenario setup = resolve_scenario(
      load_scenario("builtin:umpipe-synthetic.textproto",
                    {"schedule.kind=ONE_F_ONE_B", "cluster.interference.compute_slowdown=0.4",
                     "cluster.interference.transfer_slowdown=0.7", "simgrid.exact=true",
                     "training.iterations=2"}));
  Program program = build_program(setup);
  apply_interference(program, setup.cluster);
  int32_t slowed = 0;
  for (const Instruction& ins : program.instructions) slowed += ins.interference_s > 0;
  EXPECT_GT(slowed, 10);
  testing::expect_same_times(program, run_analytic(program, setup.cluster),
                             run_simgrid(program, setup.cluster, setup.simgrid));
}

TEST(Interference, BusyIntervalsMergeAndMeasureOverlap) {
  BusyIntervals busy(1);
  busy.add(0, 0, 2);
  busy.add(0, 1, 3);
  busy.add(0, 5, 6);
  busy.add(0, 7, 7);  // empty
  busy.finish();
  EXPECT_DOUBLE_EQ(busy.overlap(0, 2.5, 5.5), 1.0);
  EXPECT_DOUBLE_EQ(busy.overlap(0, -1, 10), 4.0);
  EXPECT_DOUBLE_EQ(busy.overlap(0, 3, 5), 0.0);
}

TEST(Interference, RejectsAnAbsurdSlowdownWithItsField) {
  try {
    resolved(two_stage_text(0, 1.0));
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("cluster.interference.transfer_slowdown"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace pipetwin
