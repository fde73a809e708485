// The LibTorch backend's costs (built with LibTorch only):
// - executor overhead: a one-stage Program on one rank against the bare training loop
//   doing the same computation (run_reference), per instruction and as a share of the
//   step;
// - Gloo point-to-point: one-way time and bandwidth between two ranks on loopback (two
//   threads of this process, each its own rank).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "backend/common/local_launcher.h"
#include "backend/torch/link_calibration.h"
#include "backend/torch/real_run.h"
#include "sim/driver/build_program.h"
#include "sim/scenario/loaded_scenario.h"
#include "sim/scenario/resolve_scenario.h"

namespace pipetwin {
namespace {

// The MLP of scenarios/mlp-cpu-2rank.textproto (hidden 512) or a tiny one (hidden 32) whose compute
// is so short that the executor's fixed cost per instruction shows.
void BM_ExecutorOverhead(benchmark::State& state) {
  const int hidden = static_cast<int>(state.range(0));
  const int iterations = static_cast<int>(state.range(1));
  const ResolvedScenario setup = resolve_scenario(
      load_scenario("builtin:mlp-cpu-2rank",
                    {"schedule.stages=1", "training.iterations=" + std::to_string(iterations),
                     "model.zoo.hidden=" + std::to_string(hidden)}));
  const Program program = build_program(setup);
  // The two alternate, and the median of their differences is reported: both share the
  // machine's noise, which a difference of means would not cancel.
  std::vector<double> executor, bare, difference;
  for (auto _ : state) {
    RankEnvironment env;
    env.master_port = free_local_port();
    const MeasuredRun run = run_as_rank(setup, program, env, {});
    const double begin = *std::min_element(run.times.start_s.begin(), run.times.start_s.end());
    const double end = *std::max_element(run.times.end_s.begin(), run.times.end_s.end());
    executor.push_back(end - begin);
    bare.push_back(run_reference(setup, {}).train_s);
    difference.push_back(executor.back() - bare.back());
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  state.counters["instructions"] = program.size();
  state.counters["executor_ms"] = median(executor) * 1e3;
  state.counters["bare_loop_ms"] = median(bare) * 1e3;
  state.counters["overhead_us_per_instr"] = median(difference) / program.size() * 1e6;
  state.counters["overhead_pct"] = median(difference) / median(bare) * 100;
}
BENCHMARK(BM_ExecutorOverhead)
    ->Args({512, 10})
    ->Args({32, 100})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(9);

void BM_GlooPointToPoint(benchmark::State& state) {
  const int64_t bytes = state.range(0);
  for (auto _ : state) {
    const int port = free_local_port();
    LinkCalibration measured;
    std::thread peer([&] {
      RankEnvironment env;
      env.rank = 1, env.world_size = 2, env.master_port = port;
      (void)calibrate_link(env, {bytes}, 9, 60);
    });
    RankEnvironment env;
    env.world_size = 2, env.master_port = port;
    measured = calibrate_link(env, {bytes}, 9, 60).alone;
    peer.join();
    state.SetIterationTime(measured.samples.at(0).second);
  }
  state.SetBytesProcessed(state.iterations() * bytes);
}
BENCHMARK(BM_GlooPointToPoint)
    ->RangeMultiplier(16)
    ->Range(4 << 10, 64 << 20)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond)
    ->Iterations(3);

}  // namespace
}  // namespace pipetwin
