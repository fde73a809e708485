// Closed forms on random K, M and costs, with uniform stages and zero communication:
// GPipe and 1F1B take (M+K-1)(t_f+t_b), the bubble is (K-1)/(M+K-1), and the peak
// stash on stage s is M microbatches (GPipe) or min(K-s, M) (1F1B).
#include <gtest/gtest.h>

#include <random>

#include "analysis/metrics.h"
#include "sim/driver/build_program.h"
#include "sim/exec/analytic_executor.h"
#include "sim/exec/make_timeline.h"
#include "sim/exec/memory_curve.h"
#include "uniform_setup.h"

namespace pipetwin {
namespace {

using testing::uniform_setup;

struct RunResult {
  Program program;
  ExecutionTimes times;
  MemoryCurve memory;
  RunMetrics metrics;
};

RunResult run(const ResolvedScenario& setup) {
  RunResult r;
  r.program = build_program(setup);
  r.times = run_analytic(r.program, setup.cluster);
  r.memory = memory_curve(r.program, r.times);
  const Timeline timeline = make_timeline(r.program, setup.cluster, r.times, r.memory, "analytic");
  r.metrics = compute_metrics(timeline, setup.training.iterations, setup.training.global_batch);
  return r;
}

class ClosedForm : public ::testing::TestWithParam<proto::ScheduleKind> {};

TEST_P(ClosedForm, MakespanAndBubbleOnRandomScenarios) {
  std::mt19937 rng(12345);
  for (int trial = 0; trial < 200; ++trial) {
    const int K = std::uniform_int_distribution<int>(1, 12)(rng);
    const int M = std::uniform_int_distribution<int>(1, 40)(rng);
    const double tf = std::uniform_real_distribution<double>(1e-4, 1e-1)(rng);
    const double tb = std::uniform_real_distribution<double>(1e-4, 2e-1)(rng);
    const RunResult r = run(uniform_setup(GetParam(), K, M, tf, tb));
    const double expected = (M + K - 1) * (tf + tb);
    EXPECT_NEAR(r.metrics.makespan_s, expected, 1e-12 * expected)
        << "K=" << K << " M=" << M << " tf=" << tf << " tb=" << tb;
    EXPECT_NEAR(r.metrics.bubble_ratio, double(K - 1) / (M + K - 1), 1e-9)
        << "K=" << K << " M=" << M;
  }
}

TEST_P(ClosedForm, PeakStashPerStage) {
  std::mt19937 rng(777);
  for (int trial = 0; trial < 100; ++trial) {
    const int K = std::uniform_int_distribution<int>(1, 10)(rng);
    const int M = std::uniform_int_distribution<int>(1, 24)(rng);
    const double tf = std::uniform_real_distribution<double>(1e-3, 1e-2)(rng);
    const double tb = std::uniform_real_distribution<double>(1e-3, 2e-2)(rng);
    const int samples = 4;
    const double stash_per_sample = 1000;
    const RunResult r = run(uniform_setup(GetParam(), K, M, tf, tb, 1, samples, stash_per_sample));
    for (int s = 0; s < K; ++s) {
      const int expected = GetParam() == proto::GPIPE ? M : std::min(K - s, M);
      EXPECT_EQ(r.memory.peaks[s].bytes, int64_t(expected * samples * stash_per_sample))
          << "K=" << K << " M=" << M << " stage " << s;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Schedules, ClosedForm, ::testing::Values(proto::GPIPE, proto::ONE_F_ONE_B),
                         [](const auto& info) { return proto::ScheduleKind_Name(info.param); });

// Megatron-LM (Narayanan et al. 2021): with v chunks per device, the bubble shrinks
// by v: makespan = M (t_f + t_b) + (K - 1)(t_f + t_b) / v.
TEST(Interleaved, MakespanMatchesMegatronFormula) {
  std::mt19937 rng(99);
  for (int trial = 0; trial < 100; ++trial) {
    const int K = std::uniform_int_distribution<int>(2, 8)(rng);
    const int v = std::uniform_int_distribution<int>(2, 4)(rng);
    const int M = K * std::uniform_int_distribution<int>(1, 5)(rng);
    const double tf = std::uniform_real_distribution<double>(1e-3, 1e-2)(rng);
    const double tb = 2 * tf;  // the formula assumes t_b / t_f constant across chunks
    const RunResult r = run(uniform_setup(proto::INTERLEAVED_ONE_F_ONE_B, K, M, tf, tb, v));
    const double expected = M * (tf + tb) + (K - 1) * (tf + tb) / v;
    EXPECT_NEAR(r.metrics.makespan_s, expected, 1e-9 * expected)
        << "K=" << K << " v=" << v << " M=" << M;
  }
}

TEST(Interleaved, OneVirtualStageIsOneFOneB) {
  const RunResult a = run(uniform_setup(proto::INTERLEAVED_ONE_F_ONE_B, 4, 8, 0.01, 0.02, 1));
  const RunResult b = run(uniform_setup(proto::ONE_F_ONE_B, 4, 8, 0.01, 0.02, 1));
  EXPECT_EQ(a.times.start_s, b.times.start_s);
}

}  // namespace
}  // namespace pipetwin
