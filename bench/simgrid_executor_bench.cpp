// How the simgrid engine scales: one iteration of a GPT-style model, 8 pipeline stages x
// D data-parallel replicas (8 to 8192 GPUs on DGX H100 nodes), 32 microbatches. Each run
// includes the fork of the simulation process and the platform's construction. The
// `per_gpu_ms` counter is the wall time per GPU: flat when the cost is linear in the cluster.
#include <benchmark/benchmark.h>

#include <string>

#include "sim/driver/build_program.h"
#include "sim/exec/analytic_executor.h"
#include "sim/scenario/loaded_scenario.h"
#include "sim/scenario/resolve_scenario.h"
#include "sim/simgrid/simgrid_executor.h"

namespace pipetwin {
namespace {

ResolvedScenario cluster_of(int gpus) {
  const int replicas = gpus / 8;
  const std::string text =
      "cluster { preset: \"dgx-h100\" nodes: " + std::to_string(gpus / 8) +
      " }\n"
      "model { zoo { name: \"gpt\" layers: 32 hidden: 4096 seq_len: 2048 heads: 32 "
      "vocab: 50257 } }\n"
      "training { global_batch: " +
      std::to_string(32 * replicas) +
      " microbatches: 32 data_parallel: " + std::to_string(replicas) +
      // One gradient all-reduce per stage: the engine's scaling, as docs/performance.md
      // states it.
      " grad_bucket_mb: 0 }\nschedule { kind: ONE_F_ONE_B stages: 8 }\n";
  return resolve_scenario(parse_scenario(text, "bench", "", false, {}));
}

// SimGrid activities one run simulates: an execution per compute instruction, a
// communication per SEND/RECV pair, and one flow per member of a ring all-reduce (2(D-1)
// per member with simgrid.collective_steps).
int64_t simulated_activities(const Program& program, bool collective_steps) {
  int64_t activities = 0;
  for (const Instruction& instr : program.instructions) {
    if (!is_transfer(instr.op) && !is_collective(instr.op)) ++activities;
    if (is_send(instr.op)) ++activities;
  }
  for (int32_t g = 0; g < program.num_groups(); ++g) {
    const int64_t members = static_cast<int64_t>(program.members_of_group(g).size());
    activities += collective_steps ? members * 2 * (members - 1) : members;
  }
  return activities;
}

void run_one_iteration(benchmark::State& state, bool collective_steps) {
  ResolvedScenario setup = cluster_of(static_cast<int>(state.range(0)));
  setup.simgrid.collective_steps = collective_steps;
  const Program program = build_program(setup);
  for (auto _ : state) {
    ExecutionTimes times = run_simgrid(program, setup.cluster, setup.simgrid);
    benchmark::DoNotOptimize(times.end_s.data());
  }
  const int64_t activities = simulated_activities(program, collective_steps);
  state.SetItemsProcessed(state.iterations() * activities);  // activities per second
  state.counters["gpus"] = static_cast<double>(state.range(0));
  state.counters["instructions"] = program.size();
  state.counters["activities"] = static_cast<double>(activities);
  state.counters["per_gpu_ms"] = benchmark::Counter(
      static_cast<double>(state.range(0)) / 1e3,  // inverted rate: seconds * 1e3 / gpus
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// The default: ring all-reduces aggregated into one flow per member.
void BM_SimgridOneIteration(benchmark::State& state) { run_one_iteration(state, false); }
BENCHMARK(BM_SimgridOneIteration)
    ->Arg(8)
    ->Arg(64)
    ->Arg(512)
    ->Arg(1024)
    ->Arg(2048)
    ->Arg(4096)
    ->Arg(8192)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// Round by round (simgrid.collective_steps): quadratic in the replicas.
void BM_SimgridOneIterationCollectiveSteps(benchmark::State& state) {
  run_one_iteration(state, true);
}
BENCHMARK(BM_SimgridOneIterationCollectiveSteps)
    ->Arg(8)
    ->Arg(64)
    ->Arg(512)
    ->Arg(1024)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace pipetwin
