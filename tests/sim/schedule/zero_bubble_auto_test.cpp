// ZB_AUTO, Zero Bubble PP's automatic schedule: never slower than the handcrafted orders that
// fit the same activation memory (ZB-H1 at 1F1B's, ZB-H2 at its own), its own timing equal
// to the analytic engine's, no idle time inside a stage at twice 1F1B's memory when F = B = W,
// and its stashes within the limit on every stage.
#include "sim/schedule/zero_bubble_auto.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "analysis/metrics.h"
#include "cli_runner.h"
#include "sim/driver/build_program.h"
#include "sim/exec/analytic_executor.h"
#include "sim/exec/memory_curve.h"
#include "sim/scenario/loaded_scenario.h"
#include "sim/scenario/resolve_scenario.h"
#include "split_setup.h"

namespace pipetwin {
namespace {

using testing::split_setup;

struct ScheduleRun {
  Program program;
  ExecutionTimes times;
  MemoryCurve memory;
  double makespan_s = 0;
};

ScheduleRun run(const ResolvedScenario& setup) {
  ScheduleRun r;
  r.program = build_program(setup);
  r.times = run_analytic(r.program, setup.cluster);
  r.memory = memory_curve(r.program, r.times);
  r.makespan_s = r.times.span_s();
  return r;
}

int64_t max_peak(const MemoryCurve& memory) {
  int64_t peak = 0;
  for (const MemoryPeak& p : memory.peaks) peak = std::max(peak, p.bytes);
  return peak;
}

ResolvedScenario random_stages(std::mt19937& rng, proto::ScheduleKind kind, int K, int M,
                               double share) {
  return testing::random_split_stages(rng, kind, K, M, share);
}

ResolvedScenario as_kind(ResolvedScenario setup, proto::ScheduleKind kind) {
  setup.schedule.kind = kind;
  return setup;
}

constexpr double kStash = 4 * 100;  // split_setup: samples x stash bytes per sample

TEST(ZeroBubbleAuto, NeverSlowerThanH1WithinOneFOneBsMemory) {
  std::mt19937 rng(41);
  for (int trial = 0; trial < 60; ++trial) {
    const int K = std::uniform_int_distribution<int>(1, 6)(rng);
    const int M = std::uniform_int_distribution<int>(1, 20)(rng);
    const double share = std::uniform_real_distribution<double>(0, 1)(rng);
    const ResolvedScenario setup = random_stages(rng, proto::ZB_AUTO, K, M, share);
    const ScheduleRun automatic = run(setup), h1 = run(as_kind(setup, proto::ZB_H1)),
                      one_f_one_b = run(as_kind(setup, proto::ONE_F_ONE_B));
    SCOPED_TRACE("K=" + std::to_string(K) + " M=" + std::to_string(M));
    EXPECT_LE(automatic.makespan_s, h1.makespan_s * (1 + 1e-9));
    EXPECT_LE(max_peak(automatic.memory), max_peak(one_f_one_b.memory));
    for (int s = 0; s < K; ++s) EXPECT_LE(automatic.memory.peaks[s].bytes, K * kStash + 0.5);
  }
}

TEST(ZeroBubbleAuto, NeverSlowerThanH2WithinH2sMemory) {
  std::mt19937 rng(42);
  for (int trial = 0; trial < 60; ++trial) {
    const int K = std::uniform_int_distribution<int>(1, 6)(rng);
    const int M = std::uniform_int_distribution<int>(1, 20)(rng);
    const double share = std::uniform_real_distribution<double>(0, 1)(rng);
    ResolvedScenario setup = random_stages(rng, proto::ZB_AUTO, K, M, share);
    const ScheduleRun h2 = run(as_kind(setup, proto::ZB_H2));
    setup.schedule.memory_limit_microbatches =
        std::max(1.0, static_cast<double>(max_peak(h2.memory)) / kStash);
    const ScheduleRun automatic = run(setup);
    SCOPED_TRACE("K=" + std::to_string(K) + " M=" + std::to_string(M));
    EXPECT_LE(automatic.makespan_s, h2.makespan_s * (1 + 1e-9));
    EXPECT_LE(max_peak(automatic.memory), max_peak(h2.memory) + 0.5);
  }
}

// With free links no transfer holds a lane for any time, so the engine reaches the
// scheduler's own timing of its fastest candidate.
TEST(ZeroBubbleAuto, WithFreeLinksTheEngineRunsTheSchedulersFastestOrder) {
  std::mt19937 rng(43);
  for (int trial = 0; trial < 30; ++trial) {
    const int K = std::uniform_int_distribution<int>(1, 6)(rng);
    const int M = std::uniform_int_distribution<int>(1, 16)(rng);
    const ResolvedScenario setup = random_stages(rng, proto::ZB_AUTO, K, M, 0.5);
    const ScheduleRun r = run(setup);
    LinearPipelineCosts costs;
    for (int s = 0; s < K; ++s) {
      const ModelLayer& layer = setup.model.layers[s];
      const double w = 4 * layer.bwd_weight->seconds_per_sample;
      costs.stages.push_back({4 * layer.fwd.seconds_per_sample,
                              4 * layer.bwd.seconds_per_sample - w, w, kStash, 0.5 * kStash});
      costs.update_s.push_back(0);
      if (s + 1 < K) {
        costs.forward_transfer_s.push_back(0);
        costs.backward_transfer_s.push_back(0);
      }
    }
    const TimedComputeOrder fastest = zb_auto_candidates(M, costs, K).front();
    const OrderTiming timing = time_linear_order(fastest.order, M, costs);
    EXPECT_NEAR(r.makespan_s, timing.makespan_s, 1e-9 * timing.makespan_s)
        << "K=" << K << " M=" << M;
  }
}

// ZB-2p (twice 1F1B's memory) with F = B = W: no stage idles between its first pass and its
// last, so one iteration takes 3Mt + (K-1)t, the least any order can (stage K-1's first
// input arrives after K-1 forwards), even where W keeps a share of the stash and ZB-H2 does
// not fit.
TEST(ZeroBubbleAuto, TwiceOneFOneBsMemoryLeavesNoGapWhenPassesAreEqual) {
  for (int K = 1; K <= 8; ++K) {
    for (int M : {2 * K, 3 * K, 4 * K + 1}) {
      for (double share : {0.0, 0.3}) {
        const double t = 0.01;
        ResolvedScenario setup = split_setup(proto::ZB_AUTO, K, M, t, t, t);
        testing::set_weight_stash_share(setup, share);
        setup.schedule.memory_limit_microbatches = 2 * K;
        const ScheduleRun r = run(setup);
        const double least = 3 * M * t + (K - 1) * t;
        EXPECT_NEAR(r.makespan_s, least, 1e-9 * least)
            << "K=" << K << " M=" << M << " share " << share;
      }
    }
  }
}

// With the links' costs (a GPT on 8 H100s, 32 microbatches), the engine's step is the
// scheduler's: no slower than ZB-H1, and at 1F1B's peak memory.
TEST(ZeroBubbleAuto, OnAShippedScenarioWithTransfersItIsNoSlowerThanH1) {
  const auto setup_of = [](const std::string& kind) {
    return resolve_scenario(load_scenario("builtin:gpt-8gpu-1f1b", {"schedule.kind=" + kind}));
  };
  const ScheduleRun automatic = run(setup_of("ZB_AUTO")), h1 = run(setup_of("ZB_H1")),
                    one_f_one_b = run(setup_of("ONE_F_ONE_B"));
  EXPECT_LE(automatic.makespan_s, h1.makespan_s * (1 + 1e-9));
  EXPECT_LT(automatic.makespan_s, one_f_one_b.makespan_s);
  EXPECT_LE(max_peak(automatic.memory), max_peak(one_f_one_b.memory));
}

TEST(ZeroBubbleAuto, TheLimitIsCheckedAndOnlyForZbAuto) {
  testing::CliResult r = testing::run_pipetwin(
      "simulate --set schedule.kind=ZB_AUTO --set schedule.memory_limit_microbatches=0.5");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("schedule.memory_limit_microbatches"), std::string::npos) << r.err;
  r = testing::run_pipetwin("simulate --set schedule.memory_limit_microbatches=3");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("only ZB_AUTO"), std::string::npos) << r.err;
  r = testing::run_pipetwin("simulate --set schedule.kind=ZB_AUTO --json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

}  // namespace
}  // namespace pipetwin
