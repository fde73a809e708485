// Zero-bubble schedules (Qi et al. 2024) on uniform stages with free links: their closed
// forms (1F1B with split backwards takes M(F+B+W) + (K-1)(F+B); ZB-H1 M(F+B+W) +
// (K-1)(F+B-W); ZB-H2 leaves no gap on any stage and settles at M(F+B+W) + (K-1)(F+B-2W)
// per iteration), their activation memory against 1F1B's, and ZB-V's greedy order.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "analysis/metrics.h"
#include "sim/driver/build_program.h"
#include "sim/exec/analytic_executor.h"
#include "sim/exec/make_timeline.h"
#include "sim/exec/memory_curve.h"
#include "sim/program/validate_program.h"
#include "sim/schedule/zero_bubble_order.h"
#include "split_setup.h"

namespace pipetwin {
namespace {

using testing::split_setup;

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

int64_t max_peak(const MemoryCurve& memory) {
  int64_t peak = 0;
  for (const MemoryPeak& p : memory.peaks) peak = std::max(peak, p.bytes);
  return peak;
}

// Random F, B, W with W <= min(F, B), where the closed forms hold for any costs.
struct PassTimes {
  double f, b, w;
};
PassTimes random_times(std::mt19937& rng) {
  std::uniform_real_distribution<double> time(1e-3, 1e-1);
  const double f = time(rng), b = time(rng);
  const double w = std::uniform_real_distribution<double>(1e-4, std::min(f, b))(rng);
  return {f, b, w};
}

// B sends its gradient upstream before W runs, so W leaves the critical path between
// stages: M(F+B+W) + (K-1)(F+B), against 1F1B's (M+K-1)(F+B+W).
TEST(ZeroBubble, OneFOneBWithSplitBackwardsTakesWOffTheCriticalPath) {
  std::mt19937 rng(1);
  for (int trial = 0; trial < 100; ++trial) {
    const int K = std::uniform_int_distribution<int>(1, 8)(rng);
    const int M = std::uniform_int_distribution<int>(1, 24)(rng);
    const auto [f, b, w] = random_times(rng);
    const ResolvedScenario setup = split_setup(proto::ONE_F_ONE_B, K, M, f, b, w);
    const PipelineLayout layout = make_layout(setup, place_layers(setup));
    const Program program = lower(layout, split_backwards(one_f_one_b_order(K, M)), 1);
    validate_program(program);
    const ExecutionTimes times = run_analytic(program, setup.cluster);
    const double makespan = *std::max_element(times.end_s.begin(), times.end_s.end());
    const double expected = M * (f + b + w) + (K - 1) * (f + b);
    EXPECT_NEAR(makespan, expected, 1e-9 * expected) << "K=" << K << " M=" << M;
  }
}

TEST(ZeroBubble, H1MakespanIsMTimesFBWPlusKMinusOneTimesFPlusBMinusW) {
  std::mt19937 rng(2);
  for (int trial = 0; trial < 150; ++trial) {
    const int K = std::uniform_int_distribution<int>(1, 8)(rng);
    const int M = std::uniform_int_distribution<int>(K, 3 * K + 4)(rng);
    const PassTimes t = trial < 20 ? PassTimes{0.01, 0.01, 0.01} : random_times(rng);
    const RunResult r = run(split_setup(proto::ZB_H1, K, M, t.f, t.b, t.w));
    const double expected = M * (t.f + t.b + t.w) + (K - 1) * (t.f + t.b - t.w);
    EXPECT_NEAR(r.metrics.makespan_s, expected, 1e-9 * expected)
        << "K=" << K << " M=" << M << " F=" << t.f << " B=" << t.b << " W=" << t.w;
  }
}

TEST(ZeroBubble, H1WithFewerMicrobatchesThanStagesIsNoSlowerThanOneFOneB) {
  for (int K = 2; K <= 8; ++K) {
    for (int M = 1; M < K; ++M) {
      const RunResult zb = run(split_setup(proto::ZB_H1, K, M, 0.01, 0.01, 0.01));
      const double one_f_one_b = (M + K - 1) * 0.03;
      EXPECT_LE(zb.metrics.makespan_s, one_f_one_b * (1 + 1e-9)) << "K=" << K << " M=" << M;
    }
  }
}

// With F = B = W every stage runs from its first op to its last without a gap.
TEST(ZeroBubble, H2LeavesNoGapOnAnyStage) {
  for (int K = 1; K <= 8; ++K) {
    for (int M = 2 * K - 1; M <= 3 * K + 2; ++M) {
      const double t = 0.01;
      const RunResult r = run(split_setup(proto::ZB_H2, K, M, t, t, t));
      const double expected = 3 * M * t + (K - 1) * t;
      EXPECT_NEAR(r.metrics.makespan_s, expected, 1e-9 * expected) << "K=" << K << " M=" << M;
      const Program& p = r.program;
      for (int32_t d = 0; d < p.num_devices; ++d) {
        const int lane = d * kLaneCount + static_cast<int>(Lane::kCompute);
        double previous_end = -1;
        for (int32_t i = p.lane_begin[lane]; i < p.lane_begin[lane + 1]; ++i) {
          if (!is_pass(p.instructions[i].op)) continue;
          if (previous_end >= 0) {
            EXPECT_NEAR(r.times.start_s[i], previous_end, 1e-9 * expected)
                << "K=" << K << " M=" << M << " gap before " << p.describe(i);
          }
          previous_end = r.times.end_s[i];
        }
        EXPECT_NEAR(previous_end - r.times.start_s[p.lane_begin[lane]], 3 * M * t, 1e-9 * expected);
      }
    }
  }
}

// No barrier between iterations: each stage's next forwards wait only for its own update
// and their inputs, so iterations overlap and each adds M(F+B+W) + (K-1)(F+B-2W).
TEST(ZeroBubble, H2SteadyStateIteration) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 60; ++trial) {
    const int K = std::uniform_int_distribution<int>(1, 6)(rng);
    const int M = std::uniform_int_distribution<int>(2 * K - 1, 3 * K + 2)(rng);
    const PassTimes t = trial < 10 ? PassTimes{0.01, 0.01, 0.01} : random_times(rng);
    ResolvedScenario setup = split_setup(proto::ZB_H2, K, M, t.f, t.b, t.w);
    setup.training.iterations = 3;
    const double three = run(setup).metrics.makespan_s;
    setup.training.iterations = 4;
    const double four = run(setup).metrics.makespan_s;
    const double expected = M * (t.f + t.b + t.w) + (K - 1) * (t.f + t.b - 2 * t.w);
    EXPECT_NEAR(four - three, expected, 1e-9 * four)
        << "K=" << K << " M=" << M << " F=" << t.f << " B=" << t.b << " W=" << t.w;
  }
}

// W holding its share w of each stash: ZB-H1's busiest device holds what 1F1B's first
// stage holds (K-s stashes in flight and at most s pending W's on stage s).
TEST(ZeroBubble, H1PeakActivationMemoryIsOneFOneBs) {
  std::mt19937 rng(4);
  for (int trial = 0; trial < 60; ++trial) {
    const int K = std::uniform_int_distribution<int>(1, 8)(rng);
    const int M = std::uniform_int_distribution<int>(1, 24)(rng);
    const double share = trial % 3 == 0 ? 1.0 : std::uniform_real_distribution<double>(0, 1)(rng);
    ResolvedScenario zb = split_setup(proto::ZB_H1, K, M, 0.01, 0.01, 0.01);
    testing::set_weight_stash_share(zb, share);
    ResolvedScenario baseline = split_setup(proto::ONE_F_ONE_B, K, M, 0.01, 0.01, 0.01);
    EXPECT_EQ(max_peak(run(zb).memory), max_peak(run(baseline).memory))
        << "K=" << K << " M=" << M << " share " << share;
  }
}

// ZB-H2 puts every W behind the last forward: on stage s, w_s = min(M, 2(K-s)-1) whole
// stashes in flight plus the W share of the other M - w_s microbatches, at the last F.
TEST(ZeroBubble, H2PeakActivationMemory) {
  for (int K = 1; K <= 6; ++K) {
    for (int M = 1; M <= 3 * K + 2; ++M) {
      for (double share : {0.0, 0.25, 1.0}) {
        ResolvedScenario setup = split_setup(proto::ZB_H2, K, M, 0.01, 0.01, 0.01);
        testing::set_weight_stash_share(setup, share);
        const RunResult r = run(setup);
        const double stash = 4 * 100;  // samples x bytes per sample
        for (int s = 0; s < K; ++s) {
          const int in_flight = std::min(M, 2 * (K - s) - 1);
          EXPECT_EQ(r.memory.peaks[s].bytes,
                    std::llround(in_flight * stash + (M - in_flight) * share * stash))
              << "K=" << K << " M=" << M << " stage " << s << " share " << share;
        }
        // Without W's share: (2K-1)/K times 1F1B's first stage, about twice.
        if (share == 0 && M >= 2 * K - 1) {
          EXPECT_EQ(max_peak(r.memory), std::llround((2 * K - 1) * stash));
        }
      }
    }
  }
}

TEST(ZeroBubble, VPlacesTwoChunksPerDeviceInAV) {
  const ResolvedScenario setup = split_setup(proto::ZB_V, 4, 8, 0.01, 0.01, 0.01, 2);
  const Program p = build_program(setup);
  EXPECT_EQ(p.stage_device, (std::vector<int32_t>{0, 1, 2, 3, 3, 2, 1, 0}));
  // Chunks 3 and 4 share device 3: no transfer between them.
  for (const Instruction& ins : p.instructions) {
    if (is_transfer(ins.op)) {
      EXPECT_NE(ins.device, ins.peer_device);
    }
  }
}

// The greedy V order within 1F1B's memory: a smaller bubble than ZB-H1's, never more
// activation memory than 1F1B. With F = B = W (t per device, t/2 per chunk) it takes
// 3Mt + (K-1)t/2 when W keeps 30% of the stash (the last device's first input comes after
// K-1 chunk forwards of t/2: the least possible), up to t more when W keeps all of it; about
// half ZB-H1's (K-1)t.
TEST(ZeroBubble, VHasLessBubbleThanH1WithinOneFOneBsMemory) {
  for (int K = 2; K <= 8; ++K) {
    for (int M : {K, 2 * K, 3 * K}) {
      for (double share : {1.0, 0.3}) {
        const double t = 0.01;
        ResolvedScenario v = split_setup(proto::ZB_V, K, M, t, t, t, 2);
        testing::set_weight_stash_share(v, share);
        ResolvedScenario h1 = split_setup(proto::ZB_H1, K, M, t, t, t);
        testing::set_weight_stash_share(h1, share);
        const ResolvedScenario baseline = split_setup(proto::ONE_F_ONE_B, K, M, t, t, t);
        const RunResult rv = run(v), rh1 = run(h1), rb = run(baseline);
        EXPECT_LT(rv.metrics.bubble_ratio, rh1.metrics.bubble_ratio) << "K=" << K << " M=" << M;
        EXPECT_LE(max_peak(rv.memory), max_peak(rb.memory)) << "K=" << K << " M=" << M;
        const double least = (3 * M + (K - 1) / 2.0) * t;
        if (share < 1) {
          EXPECT_NEAR(rv.metrics.makespan_s, least, 1e-9 * least) << "K=" << K << " M=" << M;
        } else {
          EXPECT_LE(rv.metrics.makespan_s, least + t * (1 + 1e-9)) << "K=" << K << " M=" << M;
        }
      }
    }
  }
}

TEST(ZeroBubble, AnyMicrobatchCountAndUnequalStagesRun) {
  std::mt19937 rng(5);
  for (proto::ScheduleKind kind : {proto::ZB_H1, proto::ZB_H2, proto::ZB_V}) {
    for (int trial = 0; trial < 40; ++trial) {
      const int K = std::uniform_int_distribution<int>(1, 6)(rng);
      const int M = std::uniform_int_distribution<int>(1, 20)(rng);
      const int v = kind == proto::ZB_V ? 2 : 1;
      ResolvedScenario setup = split_setup(kind, K, M, 0.01, 0.01, 0.01, v);
      for (ModelLayer& layer : setup.model.layers) {
        std::uniform_real_distribution<double> per_sample(1e-4, 1e-2);
        layer.fwd.seconds_per_sample = per_sample(rng);
        layer.bwd.seconds_per_sample = per_sample(rng);
        layer.bwd_weight->seconds_per_sample =
            std::uniform_real_distribution<double>(0, 1)(rng) * layer.bwd.seconds_per_sample;
      }
      const RunResult r = run(setup);  // build_program validates
      // Every compute op ran: the busy time is the sum of all passes.
      double busy = 0;
      for (int32_t i = 0; i < r.program.size(); ++i) {
        if (is_pass(r.program.instructions[i].op)) busy += r.times.end_s[i] - r.times.start_s[i];
      }
      double expected = 0;
      for (const ModelLayer& layer : setup.model.layers) {
        expected += M * 4 * (layer.fwd.seconds_per_sample + layer.bwd.seconds_per_sample);
      }
      EXPECT_NEAR(busy, expected, 1e-9 * expected) << proto::ScheduleKind_Name(kind);
    }
  }
}

TEST(ZeroBubble, BackwardSplitsIntoInputAndWeightGradients) {
  const ResolvedScenario setup = split_setup(proto::ZB_H1, 3, 5, 0.01, 0.02, 0.005);
  const Program p = build_program(setup);
  int inputs = 0, weights = 0;
  for (const Instruction& ins : p.instructions) {
    EXPECT_NE(ins.op, Op::kBwd);
    if (ins.op == Op::kBwdInput) {
      ++inputs;
      EXPECT_NEAR(ins.compute_s, 0.02, 1e-12);
    }
    if (ins.op == Op::kBwdWeight) {
      ++weights;
      EXPECT_NEAR(ins.compute_s, 0.005, 1e-12);
      EXPECT_EQ(instruction_text(ins, false).substr(1, 1), "W");
    }
  }
  EXPECT_EQ(inputs, 15);
  EXPECT_EQ(weights, 15);
}

}  // namespace
}  // namespace pipetwin
