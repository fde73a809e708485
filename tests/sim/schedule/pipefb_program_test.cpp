// PipeFB (sim/schedule/pipefb_program.h): forward and backward of each stage on separate
// devices. A closed form of time and stashes, and random Programs that are valid and that
// the simgrid engine in exact mode reproduces.
#include "sim/schedule/pipefb_program.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "random_setup.h"
#include "same_times.h"
#include "sim/driver/build_program.h"
#include "sim/exec/analytic_executor.h"
#include "sim/exec/memory_curve.h"
#include "sim/simgrid/simgrid_executor.h"
#include "uniform_setup.h"

namespace pipetwin {
namespace {

double makespan(const ExecutionTimes& times) {
  return *std::max_element(times.end_s.begin(), times.end_s.end());
}

// PipeFB with free communication and t_b >= t_f: microbatch 0 runs forward through the K
// forward devices, then the backward devices are the critical chain, each BWD right after
// the one before: makespan K t_f + (K + M - 1) t_b. A forward device holds one stash at a
// time; backward device s min(W_s, M), W_s = ceil((K - s)(t_f + t_b) / t_b), the window
// that covers a microbatch's round trip.
TEST(PipeFb, ClosedFormTimeAndStashes) {
  std::mt19937 rng(8);
  for (int trial = 0; trial < 60; ++trial) {
    const int K = std::uniform_int_distribution<int>(1, 6)(rng);
    const int M = std::uniform_int_distribution<int>(1, 16)(rng);
    const double tf = std::uniform_real_distribution<double>(1e-3, 2e-3)(rng);
    const double tb = std::uniform_real_distribution<double>(2e-3, 4e-3)(rng);
    ResolvedScenario setup = testing::uniform_setup(proto::PIPEFB, K, M, tf, tb, 1, 4, 1000);
    for (int d = K; d < 2 * K; ++d) {
      setup.cluster.devices.push_back({d, 0, "gpu" + std::to_string(d), 1e15, 1e15});
    }
    setup.cluster.gpus_per_node = 2 * K;
    setup.cluster.intra_node = {1e30, 0};  // free transfers
    const Program p = build_program(setup);
    const ExecutionTimes t = run_analytic(p, setup.cluster);
    const MemoryCurve memory = memory_curve(p, t);
    SCOPED_TRACE("K=" + std::to_string(K) + " M=" + std::to_string(M));
    EXPECT_NEAR(makespan(t), K * tf + (K + M - 1) * tb, 1e-12);
    for (int s = 0; s < K; ++s) {
      EXPECT_EQ(memory.peaks[2 * s].bytes, 4 * 1000) << "forward device of stage " << s;
      const int window = static_cast<int>(std::ceil((K - s) * (tf + tb) / tb - 1e-9));
      EXPECT_EQ(memory.peaks[2 * s + 1].bytes, std::min(window, M) * 4 * 1000)
          << "backward device of stage " << s;
    }
  }
}

// PipeFB Programs on random costs, sizes and links (with and without recomputation) are
// valid (no deadlock: build_program validates) and the simgrid engine in exact mode gives
// the analytic timestamps.
TEST(PipeFb, RandomProgramsAreValidAndExactSimgridAgrees) {
  std::mt19937 rng(99);
  for (int trial = 0; trial < 30; ++trial) {
    ResolvedScenario setup = testing::random_pipefb_setup(rng, trial % 2 == 1);
    SCOPED_TRACE("trial " + std::to_string(trial));
    testing::expect_exact_simgrid_equals_analytic(setup);
  }
}

}  // namespace
}  // namespace pipetwin
