// Selective offload (schedule.offload.policy SELECTIVE): the search keeps only the
// offloads that pay, so it is never slower than no offload and never peaks higher.
#include "sim/planner/selective_offload.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "random_setup.h"
#include "sim/driver/build_program.h"
#include "sim/exec/analytic_executor.h"
#include "sim/exec/memory_curve.h"

namespace pipetwin {
namespace {

void enable_offload(ResolvedScenario& setup, double bandwidth, double latency, int horizon) {
  setup.cluster.has_host_link = true;
  setup.cluster.host_link = {bandwidth, latency};
  setup.cluster.host_memory_bytes = 1e18;
  setup.schedule.offload.enabled = true;
  setup.schedule.offload.prefetch_horizon = horizon;
  setup.schedule.offload.stages.clear();
  for (int s = 0; s < setup.schedule.chunks(); ++s) setup.schedule.offload.stages.push_back(s);
}

double makespan(const ExecutionTimes& times) {
  return *std::max_element(times.end_s.begin(), times.end_s.end());
}

// SELECTIVE keeps only offloads that pay: never slower than no offload, never a higher peak.
TEST(OffloadSelective, NeverSlowerAndNeverHigher) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 30; ++trial) {
    ResolvedScenario setup = testing::random_setup(rng, proto::ONE_F_ONE_B);
    setup.training.data_parallel = 1;
    setup.training.global_batch = setup.training.microbatches * 4;
    const Program plain = build_program(setup);
    const ExecutionTimes plain_times = run_analytic(plain, setup.cluster);
    const MemoryCurve plain_memory = memory_curve(plain, plain_times);
    enable_offload(setup, std::uniform_real_distribution<double>(1e9, 100e9)(rng), 1e-6, 2);
    setup.schedule.offload.policy = proto::Offload::SELECTIVE;
    const Program p = build_program(setup);
    const ExecutionTimes t = run_analytic(p, setup.cluster);
    const MemoryCurve memory = memory_curve(p, t);
    EXPECT_LE(makespan(t), makespan(plain_times) * (1 + 1e-9)) << "trial " << trial;
    for (int32_t d = 0; d < p.num_devices; ++d) {
      EXPECT_LE(memory.peaks[d].bytes, plain_memory.peaks[d].bytes) << "trial " << trial;
    }
  }
}

}  // namespace
}  // namespace pipetwin
