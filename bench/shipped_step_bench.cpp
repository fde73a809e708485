// The 405B-class step on 16,384 GPUs (scenarios/llama3-405b-16384gpu.textproto) end to end, as
// `pipetwin simulate --json` runs it without starting a process: load and resolve the
// scenario, build the Program, execute it, and write the JSON report (no timeline). The
// `instructions_per_s` counter is the end-to-end rate docs/performance.md holds against its
// target. The SimGrid case takes a minute or more (one run).
#include <benchmark/benchmark.h>

#include <string>

#include "app/simulate_run.h"
#include "sim/scenario/loaded_scenario.h"

namespace pipetwin {
namespace {

void run_step(benchmark::State& state, Engine engine) {
  const LoadedScenario loaded = load_scenario("builtin:llama3-405b-16384gpu", {});
  SimulationOptions options;
  options.engine = engine;
  options.timeline = false;
  double instructions = 0;
  for (auto _ : state) {
    const SimulateRun run = run_simulation(loaded, options);
    const std::string report = run.json().dump();
    benchmark::DoNotOptimize(report.data());
    instructions = static_cast<double>(run.result->program.size());
  }
  state.counters["instructions"] = instructions;
  state.counters["instructions_per_s"] = benchmark::Counter(
      instructions * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

void BM_Llama405bStepAnalytic(benchmark::State& state) { run_step(state, Engine::kAnalytic); }
void BM_Llama405bStepSimgrid(benchmark::State& state) { run_step(state, Engine::kSimgrid); }

BENCHMARK(BM_Llama405bStepAnalytic)
    ->Unit(benchmark::kSecond)
    ->UseRealTime()
    ->Iterations(1)
    ->Repetitions(5);
BENCHMARK(BM_Llama405bStepSimgrid)->Unit(benchmark::kSecond)->UseRealTime()->Iterations(1);

}  // namespace
}  // namespace pipetwin
