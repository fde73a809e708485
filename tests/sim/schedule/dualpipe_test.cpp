// DualPipe (DeepSeek-V3) on uniform stages with free links: its placement of two pipeline
// copies, every pass of both directions run once, its closed form with F = B and W <= F
// (a bubble of (K/2-1)(F+B-W), half ZB-H1's (K-1)(F+B-W)), the analytic engine against the
// order's own replay for any costs, its memory (twice the weights, K+1 microbatches'
// activations against 1F1B's K), the gradients of the two copies summed, and bad settings.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <tuple>

#include "analysis/metrics.h"
#include "cli_runner.h"
#include "sim/driver/build_program.h"
#include "sim/exec/analytic_executor.h"
#include "sim/exec/make_timeline.h"
#include "sim/exec/memory_curve.h"
#include "sim/program/validate_program.h"
#include "sim/schedule/dualpipe_order.h"
#include "split_setup.h"

namespace pipetwin {
namespace {

using ::testing::HasSubstr;
using testing::split_setup;

// Weights that differ per stage, so that a device's two copies are told apart.
ResolvedScenario with_weights(ResolvedScenario setup) {
  for (size_t l = 0; l < setup.model.layers.size(); ++l) {
    setup.model.layers[l].parameter_bytes = 4000000 * static_cast<int64_t>(l + 1);
  }
  return setup;
}

double makespan(const ResolvedScenario& setup, const Program& program) {
  const ExecutionTimes times = run_analytic(program, setup.cluster);
  return *std::max_element(times.end_s.begin(), times.end_s.end());
}

TEST(DualPipe, TwoCopiesOfThePipelineRunInOppositeDirections) {
  const ResolvedScenario setup = split_setup(proto::DUALPIPE, 4, 8, 0.01, 0.01, 0.01);
  const Program p = build_program(setup);
  EXPECT_EQ(p.num_stages, 8);
  EXPECT_EQ(p.stage_device, (std::vector<int32_t>{0, 1, 2, 3, 3, 2, 1, 0}));
  EXPECT_EQ(p.model_stage, (std::vector<int32_t>{0, 1, 2, 3, 0, 1, 2, 3}));
  const int32_t half = p.global_batch / 2;
  for (const Instruction& ins : p.instructions) {
    if (is_pass(ins.op)) {
      // The forward pipeline takes the first half of the batch, the reverse one the second.
      if (ins.stage < 4) {
        EXPECT_LE(ins.range.hi, half) << p.text(0);
      }
      if (ins.stage >= 4) {
        EXPECT_GE(ins.range.lo, half);
      }
    }
    if (is_transfer(ins.op)) {
      EXPECT_NE(ins.device, ins.peer_device);
      // Nothing crosses between the two pipelines' ends on device 3.
      EXPECT_FALSE(ins.stage == 3 && ins.op == Op::kSendAct);
    }
  }
}

TEST(DualPipe, EveryDeviceRunsEachPassOfItsTwoStagesOnce) {
  for (int K : {2, 4, 6, 8}) {
    for (int M = 2 * K; M <= 4 * K; M += 2) {
      const ComputeOrder order = dualpipe_order(K, M);
      for (int d = 0; d < K; ++d) {
        std::set<std::tuple<int, int, int>> seen;  // op, stage, microbatch
        std::set<std::pair<int, int>> inputs_done;
        for (const ComputeAction& a : order[d]) {
          EXPECT_TRUE(a.stage == d || a.stage == 2 * K - 1 - d) << "K=" << K << " d=" << d;
          EXPECT_TRUE(seen.insert({static_cast<int>(a.op), a.stage, a.microbatch}).second);
          if (a.op == Op::kBwdInput) inputs_done.insert({a.stage, a.microbatch});
          if (a.op == Op::kBwdWeight) {
            EXPECT_TRUE(inputs_done.count({a.stage, a.microbatch}));
          }
        }
        // F, B and W of M/2 microbatches on each of two stages.
        EXPECT_EQ(seen.size(), 3u * M) << "K=" << K << " M=" << M << " d=" << d;
      }
    }
  }
}

// With F = B and W <= F each device idles (K/2-1)(F+B-W) in all: half of ZB-H1's
// (K-1)(F+B-W), with the pair of a forward and a backward run one after the other.
TEST(DualPipe, WithEqualForwardAndBackwardTheBubbleIsHalfZbH1s) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 60; ++trial) {
    const int K = 2 * std::uniform_int_distribution<int>(1, 5)(rng);
    const int M = 2 * std::uniform_int_distribution<int>(K, 2 * K)(rng);
    const double f = std::uniform_real_distribution<double>(1e-3, 1e-1)(rng);
    const double w = std::uniform_real_distribution<double>(0, f)(rng);
    const ResolvedScenario setup = split_setup(proto::DUALPIPE, K, M, f, f, w);
    const double expected = M * (2 * f + w) + (K / 2 - 1) * (2 * f - w);
    EXPECT_NEAR(makespan(setup, build_program(setup)), expected, 1e-9 * expected)
        << "K=" << K << " M=" << M;
  }
}

// For any costs the analytic engine, walking the lowered Program, ends each device where
// the order's own replay says.
TEST(DualPipe, AnalyticEngineAgreesWithTheOrdersReplayForAnyCosts) {
  std::mt19937 rng(12);
  for (int trial = 0; trial < 60; ++trial) {
    const int K = 2 * std::uniform_int_distribution<int>(1, 4)(rng);
    const int M = 2 * std::uniform_int_distribution<int>(K, 2 * K)(rng);
    std::uniform_real_distribution<double> time(1e-3, 1e-1);
    const double f = time(rng), b = time(rng), w = time(rng);
    const ResolvedScenario setup = split_setup(proto::DUALPIPE, K, M, f, b, w);
    const Program program = build_program(setup);
    std::vector<ChunkPassCosts> costs(2 * K, ChunkPassCosts{f, b, w, 0, 0});
    const ProductionTimes replay = dualpipe_end_times(dualpipe_order(K, M), costs);
    double expected = 0;
    for (const auto& device : replay) expected = std::max(expected, device.back());
    EXPECT_NEAR(makespan(setup, program), expected, 1e-9 * expected) << "K=" << K << " M=" << M;
    // No device idles less than all its passes: M(F+B+W) of work each.
    EXPECT_GE(expected, M * (f + b + w) * (1 - 1e-12));
  }
}

int64_t activation_peak(const Program& program, const MemoryCurve& memory, int device) {
  return memory.peaks[device].bytes - program.static_bytes[device];
}

// DeepSeek's table: twice the weights, K+1 microbatches' activations against 1F1B's K.
TEST(DualPipe, HoldsTwiceTheWeightsAndOneMoreMicrobatchOfActivations) {
  for (int K : {2, 4, 8}) {
    const int M = 2 * K + 2;
    const ResolvedScenario dual =
        with_weights(split_setup(proto::DUALPIPE, K, M, 0.01, 0.01, 0.01));
    const ResolvedScenario base =
        with_weights(split_setup(proto::ONE_F_ONE_B, K, M, 0.01, 0.01, 0.01));
    const Program pd = build_program(dual), pb = build_program(base);
    const MemoryCurve md = memory_curve(pd, run_analytic(pd, dual.cluster));
    const MemoryCurve mb = memory_curve(pb, run_analytic(pb, base.cluster));
    // One microbatch of one stage: 1F1B's first stage holds K of them.
    const int64_t microbatch = activation_peak(pb, mb, 0) / K;
    for (int d = 0; d < K; ++d) {
      EXPECT_EQ(pd.static_bytes[d], pb.static_bytes[d] + pb.static_bytes[K - 1 - d]);
      EXPECT_EQ(activation_peak(pd, md, d), (K + 1) * microbatch) << "K=" << K << " d=" << d;
    }
  }
}

// The two copies of a stage sum their gradients in one collective before their updates.
TEST(DualPipe, TheTwoCopiesOfAStageAllReduceTogether) {
  const ResolvedScenario setup = with_weights(split_setup(proto::DUALPIPE, 4, 8, 0.01, 0.01, 0.01));
  const Program p = build_program(setup);
  int groups = 0;
  for (int32_t g = 0; g < p.num_groups(); ++g) {
    const auto members = p.members_of_group(g);
    ASSERT_EQ(members.size(), 2u);
    const Instruction& a = p.instructions[members[0]];
    const Instruction& b = p.instructions[members[1]];
    EXPECT_EQ(a.op, Op::kAllreduce);
    EXPECT_EQ(p.model_stage_of(a.stage), p.model_stage_of(b.stage));
    EXPECT_EQ(a.device + b.device, 3);  // device d and device K-1-d
    ++groups;
  }
  EXPECT_EQ(groups, 4);
}

TEST(DualPipe, BeatsOneFOneBAndZbH1OnTheGptScenario) {
  const auto iteration = [](const char* kind) {
    const testing::CliResult r =
        testing::run_pipetwin(std::string("simulate builtin:gpt-8gpu-1f1b --json --allow-oom --set "
                                          "training.microbatches=16 --set schedule.kind=") +
                              kind);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out).at("iteration_time_s").get<double>();
  };
  const double one_f_one_b = iteration("ONE_F_ONE_B"), h1 = iteration("ZB_H1"),
               dual = iteration("DUALPIPE");
  EXPECT_LT(dual, h1);
  EXPECT_LT(h1, one_f_one_b);
}

TEST(DualPipe, BadSettingsNameTheField) {
  const auto fails = [](std::vector<std::string> overrides, const std::string& field) {
    std::string args = "simulate builtin:gpt-8gpu-1f1b --set schedule.kind=DUALPIPE";
    for (const std::string& o : overrides) args += " --set " + o;
    const testing::CliResult r = testing::run_pipetwin(args);
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_THAT(r.err, HasSubstr(field));
  };
  fails({"training.microbatches=15"}, "training.microbatches");
  fails({"training.microbatches=8"}, "training.microbatches");  // fewer than 2 x 8 stages
  fails({"schedule.stages=7", "training.microbatches=16"}, "schedule.stages");
  fails({"schedule.virtual_stages=2", "training.microbatches=16"}, "schedule.virtual_stages");
}

}  // namespace
}  // namespace pipetwin
