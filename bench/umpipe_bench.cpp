// UMPIPE planning speed: the PlanEvaluator on populations of 256 and 4096 plans,
// 8 and 32 stages, 8 and 64 microbatches, against scoring one plan at a time (the same
// evaluator in a plain loop, and the Program + analytic executor it replaces); and a full
// DGAP search (population 1024, 200 generations, 16 stages, 32 microbatches; target < 30 s).
//
// Counters: `evals/s`, plans scored per second; `cells/s`, stage x microbatch cells per
// second, where a plan has sum over stages of (forward + backward microbatches) cells,
// 2 x stages x microbatches for these equal-ish plans.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "sim/driver/build_program.h"
#include "sim/exec/analytic_executor.h"
#include "sim/umpipe/dgap.h"
#include "sim/umpipe/plan_evaluator.h"
#include "sim/umpipe/umpipe_search.h"

namespace pipetwin {
namespace {

constexpr int kSamplesPerMicrobatch = 4;

// K stages of one layer each, repeating the four shapes of scenarios/umpipe-synthetic:
// a large fixed cost per microbatch (a stage that wants few, large microbatches), two
// mixed ones, and an almost purely per-sample one (it wants many small ones); links with
// 200 us of latency per transfer. One pipeline, one iteration.
ResolvedScenario synthetic_setup(int stages, int microbatches) {
  ResolvedScenario setup;
  setup.name = "umpipe-bench";
  for (int d = 0; d < stages; ++d) {
    setup.cluster.devices.push_back(
        {d, d / 8, std::string("gpu").append(std::to_string(d)), 1e14, 80e9});
  }
  setup.cluster.nodes = (stages + 7) / 8;
  setup.cluster.gpus_per_node = 8;
  setup.cluster.intra_node = {16e9, 200e-6};
  setup.cluster.inter_node = {16e9, 200e-6};
  constexpr double kShapes[4][2] = {
      {20e-3, 0.2e-3}, {4e-3, 1e-3}, {0.5e-3, 1.5e-3}, {0.2e-3, 2e-3}};
  for (int l = 0; l < stages; ++l) {
    ModelLayer layer;
    layer.name = std::string("l").append(std::to_string(l));
    layer.fwd.fixed_s = kShapes[l % 4][0];
    layer.fwd.seconds_per_sample = kShapes[l % 4][1];
    layer.bwd.fixed_s = 2 * layer.fwd.fixed_s;
    layer.bwd.seconds_per_sample = 2 * layer.fwd.seconds_per_sample;
    layer.activation_bytes_per_sample = 4e6;
    layer.stash_bytes_per_sample = 4e6;
    if (l + 1 < stages) layer.consumers = {l + 1};
    setup.model.layers.push_back(layer);
  }
  setup.training = {microbatches * kSamplesPerMicrobatch, microbatches, 1, proto::SGD, 1};
  setup.schedule.kind = proto::GPIPE;
  setup.schedule.stages = stages;
  return setup;
}

// Equal plans with `microbatches` microbatches, each gene jittered by a few moves.
std::vector<UnequalPlan> equalish_population(int size, int stages, int microbatches) {
  dgap::Rng rng(42);
  std::vector<UnequalPlan> population;
  for (int i = 0; i < size; ++i) {
    UnequalPlan plan = equal_plan(stages, microbatches * kSamplesPerMicrobatch, microbatches);
    for (int k = 0; k < 2 * stages; ++k) dgap::mutate(rng, plan, dgap::Mutation::kMove, 0);
    population.push_back(std::move(plan));
  }
  return population;
}

int64_t cells_of(const std::vector<UnequalPlan>& population) {
  int64_t cells = 0;
  for (const UnequalPlan& plan : population) {
    for (const StagePlan& stage : plan.stages) {
      cells += static_cast<int64_t>(stage.forward_sizes.size() + stage.backward_sizes.size());
    }
  }
  return cells;
}

void set_rates(benchmark::State& state, int64_t plans, int64_t cells) {
  state.counters["evals/s"] =
      benchmark::Counter(static_cast<double>(plans), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["cells/s"] =
      benchmark::Counter(static_cast<double>(cells), benchmark::Counter::kIsIterationInvariantRate);
}

// Args: population, stages, microbatches, threads (0: one per CPU).
void BM_EvaluatePopulation(benchmark::State& state) {
  const int population = static_cast<int>(state.range(0));
  const int stages = static_cast<int>(state.range(1));
  const int microbatches = static_cast<int>(state.range(2));
  const int threads = static_cast<int>(state.range(3));
  const PlanEvaluator evaluator(synthetic_setup(stages, microbatches));
  const std::vector<UnequalPlan> plans = equalish_population(population, stages, microbatches);
  std::vector<double> seconds(plans.size());
  for (auto _ : state) {
    evaluator.evaluate(plans, seconds, threads);
    benchmark::DoNotOptimize(seconds.data());
  }
  set_rates(state, population, cells_of(plans));
}

// The same population, one plan at a time through iteration_time.
void BM_EvaluateOneByOne(benchmark::State& state) {
  const int population = static_cast<int>(state.range(0));
  const int stages = static_cast<int>(state.range(1));
  const int microbatches = static_cast<int>(state.range(2));
  const PlanEvaluator evaluator(synthetic_setup(stages, microbatches));
  const std::vector<UnequalPlan> plans = equalish_population(population, stages, microbatches);
  for (auto _ : state) {
    double total = 0;
    for (const UnequalPlan& plan : plans) total += evaluator.iteration_time(plan);
    benchmark::DoNotOptimize(total);
  }
  set_rates(state, population, cells_of(plans));
}

void PopulationArgs(benchmark::internal::Benchmark* b, bool with_threads) {
  for (int population : {256, 4096}) {
    for (int stages : {8, 32}) {
      for (int microbatches : {8, 64}) {
        if (with_threads) {
          for (int threads : {1, 0}) b->Args({population, stages, microbatches, threads});
        } else {
          b->Args({population, stages, microbatches});
        }
      }
    }
  }
}

BENCHMARK(BM_EvaluatePopulation)
    ->Apply([](benchmark::internal::Benchmark* b) { PopulationArgs(b, true); })
    ->ArgNames({"population", "stages", "microbatches", "threads"})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK(BM_EvaluateOneByOne)
    ->Apply([](benchmark::internal::Benchmark* b) { PopulationArgs(b, false); })
    ->ArgNames({"population", "stages", "microbatches"})
    ->Unit(benchmark::kMicrosecond);

// What the evaluator replaces: lower each plan into a Program and run the analytic
// executor (a sample of 16 plans).
void BM_EvaluateWithAnalyticExecutor(benchmark::State& state) {
  const int stages = static_cast<int>(state.range(0));
  const int microbatches = static_cast<int>(state.range(1));
  ResolvedScenario setup = synthetic_setup(stages, microbatches);
  setup.schedule.kind = proto::UMPIPE;
  const std::vector<UnequalPlan> plans = equalish_population(16, stages, microbatches);
  for (auto _ : state) {
    for (const UnequalPlan& plan : plans) {
      setup.schedule.stage_plans = plan;
      const ExecutionTimes times = run_analytic(build_program(setup), setup.cluster);
      benchmark::DoNotOptimize(times.end_s.data());
    }
  }
  set_rates(state, static_cast<int64_t>(plans.size()), cells_of(plans));
}
BENCHMARK(BM_EvaluateWithAnalyticExecutor)
    ->Args({8, 8})
    ->Args({32, 64})
    ->ArgNames({"stages", "microbatches"})
    ->Unit(benchmark::kMillisecond);

// The full search of the target: baselines + DGAP, population 1024, 200
// generations, 16 stages, 32 microbatches (batch 128), on every CPU.
void BM_FullSearch(benchmark::State& state) {
  const ResolvedScenario setup = synthetic_setup(16, 32);
  UmpipeSearchOptions options;
  options.dgap.population = 1024;
  options.dgap.generations = 200;
  options.dgap.seed = 1;
  UmpipeSearchResult result;
  for (auto _ : state) {
    result = search_umpipe(setup, options);
    benchmark::DoNotOptimize(result.best_s);
  }
  state.counters["evaluations"] = static_cast<double>(result.dgap.evaluations);
  state.counters["dp_microbatches"] = result.baselines.global_dp.microbatches;
  state.counters["best_ms"] = result.best_s * 1e3;
  state.counters["gain_vs_gpipe_%"] = 100 * (result.baselines.gpipe_s / result.best_s - 1);
  state.counters["gain_vs_global_dp_%"] =
      100 * (result.baselines.global_dp.seconds / result.best_s - 1);
}
BENCHMARK(BM_FullSearch)->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();

}  // namespace
}  // namespace pipetwin
