// Instructions per second of the analytic executor on large programs
// (64 stages x 512 microbatches), and of the steps around it.
#include <benchmark/benchmark.h>

#include <string>

#include "sim/driver/build_program.h"
#include "sim/exec/analytic_executor.h"
#include "sim/exec/make_timeline.h"
#include "sim/exec/memory_curve.h"
#include "sim/program/validate_program.h"
#include "sim/scenario/loaded_scenario.h"
#include "sim/scenario/resolve_scenario.h"

namespace pipetwin {
namespace {

ResolvedScenario large_setup(const std::string& kind, int stages, int microbatches) {
  std::string text = R"(
    cluster { nodes: 8 gpus_per_node: 8 gpu { peak_tflops: 100 memory_gib: 1000000 }
              intra_node { bandwidth_gbytes_per_s: 100 latency_us: 2 }
              inter_node { bandwidth_gbytes_per_s: 25 latency_us: 5 } }
    model { zoo { name: "gpt" layers: 128 hidden: 1024 seq_len: 512 heads: 16 vocab: 32000 } }
  )";
  text += "training { global_batch: " + std::to_string(microbatches) +
          " microbatches: " + std::to_string(microbatches) + " }\n";
  text += "schedule { kind: " + kind + " stages: " + std::to_string(stages) + " }\n";
  return resolve_scenario(parse_scenario(text, "bench", "", false, {}));
}

void BM_AnalyticExecutor(benchmark::State& state, const std::string& kind) {
  const ResolvedScenario setup =
      large_setup(kind, static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  const Program program = build_program(setup);
  for (auto _ : state) {
    ExecutionTimes times = run_analytic(program, setup.cluster);
    benchmark::DoNotOptimize(times.end_s.data());
  }
  state.SetItemsProcessed(state.iterations() * program.size());
  state.counters["instructions"] = program.size();
}
BENCHMARK_CAPTURE(BM_AnalyticExecutor, 1F1B, std::string("ONE_F_ONE_B"))
    ->Args({64, 512})
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_AnalyticExecutor, GPipe, std::string("GPIPE"))
    ->Args({64, 512})
    ->Unit(benchmark::kMillisecond);

void BM_BuildAndValidateProgram(benchmark::State& state) {
  const ResolvedScenario setup = large_setup("ONE_F_ONE_B", 64, 512);
  int64_t instructions = 0;
  for (auto _ : state) {
    Program program = build_program(setup);  // lowering + validation
    instructions = program.size();
    benchmark::DoNotOptimize(program.instructions.data());
  }
  state.SetItemsProcessed(state.iterations() * instructions);
}
BENCHMARK(BM_BuildAndValidateProgram)->Unit(benchmark::kMillisecond);

void BM_TimelineFromExecution(benchmark::State& state) {
  const ResolvedScenario setup = large_setup("ONE_F_ONE_B", 64, 512);
  const Program program = build_program(setup);
  const ExecutionTimes times = run_analytic(program, setup.cluster);
  for (auto _ : state) {
    const MemoryCurve memory = memory_curve(program, times);
    Timeline timeline = make_timeline(program, setup.cluster, times, memory, "analytic");
    benchmark::DoNotOptimize(timeline.spans.data());
  }
  state.SetItemsProcessed(state.iterations() * program.size());
}
BENCHMARK(BM_TimelineFromExecution)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace pipetwin
