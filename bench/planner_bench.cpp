// PipeDream planner speed: the antichain DP on ResNet-50 (177 layers, 241
// antichain states) for 16 GPUs over two bandwidth levels (2 DGX A100 nodes x 8),
// replicated and straight; target < 2 s. Also GNMT (630 states after gluing) on 8 GPUs.
#include <benchmark/benchmark.h>

#include <string>

#include "sim/planner/pipedream_planner.h"
#include "sim/scenario/loaded_scenario.h"
#include "sim/scenario/resolve_scenario.h"

namespace pipetwin {
namespace {

PlannerProblem profile_problem(const std::string& profile, int nodes, int gpus_per_node) {
  const std::string text = "name: \"" + profile +
                           "\"\ncluster { preset: \"dgx-a100\" nodes: " + std::to_string(nodes) +
                           " gpus_per_node: " + std::to_string(gpus_per_node) +
                           " }\nmodel { pipedream_profile: \"" + "profiles/" + profile +
                           ".graph.txt\" profile_batch: 128 }\ntraining { global_batch: 256 "
                           "microbatches: 8 optimizer: SGD }\nschedule { kind: ONE_F_ONE_B "
                           "stages: 2 }\n";
  // Builtin: the profiles are embedded, so the bench runs from any directory.
  return planner_problem(
      resolve_scenario(parse_scenario(text, "builtin:bench.textproto", "", true, {})));
}

void BM_PipedreamResNet50(benchmark::State& state) {
  PlannerProblem problem = profile_problem("resnet50", 2, 8);
  problem.straight = state.range(0) != 0;
  for (auto _ : state) {
    const PipedreamPlan plan = plan_pipedream(problem);
    benchmark::DoNotOptimize(plan.bottleneck_s);
    state.counters["states"] = plan.states;
    state.counters["stages"] = static_cast<double>(plan.stages.size());
  }
}
BENCHMARK(BM_PipedreamResNet50)->ArgName("straight")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

void BM_PipedreamGnmt(benchmark::State& state) {
  const PlannerProblem problem = profile_problem("gnmt", 1, 8);
  for (auto _ : state) {
    const PipedreamPlan plan = plan_pipedream(problem);
    benchmark::DoNotOptimize(plan.bottleneck_s);
    state.counters["states"] = plan.states;
  }
}
BENCHMARK(BM_PipedreamGnmt)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace pipetwin
