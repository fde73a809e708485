// A backward whose cut differs from its stage's forward cut walks whole forward graphs:
// the cost rule the real ranks follow (autograd cannot split a graph), in the lowering and
// in the UMPIPE evaluator alike.
#include <gtest/gtest.h>

#include "sim/driver/build_program.h"
#include "sim/exec/analytic_executor.h"
#include "sim/scenario/loaded_scenario.h"
#include "sim/scenario/resolve_scenario.h"
#include "sim/umpipe/plan_evaluator.h"

namespace pipetwin {
namespace {

// One layer per stage, backward = 1 ms fixed + 1 ms per sample.
ResolvedScenario two_stages(const std::string& plans) {
  const std::string text =
      "name: 'cuts' cluster { nodes: 1 gpus_per_node: 2 gpu { name: 'g' peak_tflops: 1 "
      "memory_gib: 1 } intra_node { bandwidth_gbytes_per_s: 1 latency_us: 0 } } model { "
      "layers { fwd_fixed_ms: 1 fwd_per_sample_ms: 1 bwd_fixed_ms: 1 bwd_per_sample_ms: 1 } "
      "layers { fwd_fixed_ms: 1 fwd_per_sample_ms: 1 bwd_fixed_ms: 1 bwd_per_sample_ms: 1 } "
      "layer_batch: 1 } training { global_batch: 8 microbatches: 2 optimizer: SGD } "
      "schedule { kind: UMPIPE stages: 2 " +
      plans + " }";
  return resolve_scenario(parse_scenario(text, "cuts.textproto", ".", false, {}));
}

std::vector<double> backward_costs(const Program& p, int32_t stage) {
  std::vector<double> costs;
  for (const Instruction& ins : p.instructions) {
    if (ins.op == Op::kBwd && ins.stage == stage) costs.push_back(ins.compute_s);
  }
  return costs;
}

TEST(BackwardThroughForwards, ABackwardCoveringTwoForwardsPaysForBoth) {
  const ResolvedScenario setup = two_stages(
      "stage_plans { forward_sizes: [4, 4] backward_sizes: [8] } "
      "stage_plans { forward_sizes: [8] backward_sizes: [8] }");
  const Program program = build_program(setup);
  // Two graphs of 4 samples: 2 x (1 + 4) ms, not 1 + 8 ms.
  EXPECT_DOUBLE_EQ(backward_costs(program, 0).at(0), 10e-3);
  EXPECT_DOUBLE_EQ(backward_costs(program, 1).at(0), 9e-3);
}

TEST(BackwardThroughForwards, PiecesOfOneForwardEachWalkItWhole) {
  const ResolvedScenario setup = two_stages(
      "stage_plans { forward_sizes: [8] backward_sizes: [2, 6] } "
      "stage_plans { forward_sizes: [3, 5] backward_sizes: [3, 5] }");
  const Program program = build_program(setup);
  const std::vector<double> split = backward_costs(program, 0), equal = backward_costs(program, 1);
  ASSERT_EQ(split.size(), 2u);
  EXPECT_DOUBLE_EQ(split[0], 9e-3);  // 2 samples, but the whole graph of 8
  EXPECT_DOUBLE_EQ(split[1], 9e-3);
  ASSERT_EQ(equal.size(), 2u);
  EXPECT_DOUBLE_EQ(equal[0], 4e-3);  // equal cuts: the backward of its own size
  EXPECT_DOUBLE_EQ(equal[1], 6e-3);
}

TEST(BackwardThroughForwards, TheEvaluatorStillEqualsTheAnalyticExecutor) {
  const ResolvedScenario setup = two_stages(
      "stage_plans { forward_sizes: [1, 3, 4] backward_sizes: [2, 6] } "
      "stage_plans { forward_sizes: [5, 3] backward_sizes: [1, 1, 6] }");
  const Program program = build_program(setup);
  const ExecutionTimes times = run_analytic(program, setup.cluster);
  const PlanEvaluator evaluator(setup);
  EXPECT_EQ(evaluator.iteration_time(setup.schedule.stage_plans), times.span_s());
}

}  // namespace
}  // namespace pipetwin
