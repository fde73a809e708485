// schedule.comm_overlap: transfers on their own lanes (true) or blocking the compute lane
// as DeepSpeed's blocking point-to-point does (false), and the HTA-style exposed
// communication metrics that show the difference.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <random>

#include "analysis/metrics.h"
#include "cli_runner.h"
#include "random_setup.h"
#include "random_trials.h"
#include "same_times.h"
#include "sim/driver/build_program.h"
#include "sim/exec/analytic_executor.h"
#include "sim/exec/make_timeline.h"
#include "sim/exec/memory_curve.h"
#include "sim/simgrid/simgrid_executor.h"
#include "uniform_setup.h"

namespace pipetwin {
namespace {

struct OverlapRun {
  Program program;
  ExecutionTimes times;
  RunMetrics metrics;
  double makespan = 0;
};

OverlapRun run_analytic_with(ResolvedScenario setup, bool overlap) {
  setup.schedule.comm_overlap = overlap;
  OverlapRun r;
  r.program = build_program(setup);  // validates: a blocking program that could deadlock throws
  r.times = run_analytic(r.program, setup.cluster);
  const MemoryCurve memory = memory_curve(r.program, r.times);
  const Timeline timeline = make_timeline(r.program, setup.cluster, r.times, memory, "analytic");
  r.metrics = compute_metrics(timeline, setup.training.iterations, setup.training.global_batch);
  r.makespan = r.metrics.makespan_s;
  return r;
}

ResolvedScenario random_of_kind(std::mt19937& rng, proto::ScheduleKind kind) {
  return kind == proto::PIPEFB ? testing::random_pipefb_setup(rng, rng() % 2 == 1)
                               : testing::random_setup(rng, kind);
}

class CommOverlap : public ::testing::TestWithParam<proto::ScheduleKind> {};

// Blocking only adds dependencies to a max-plus system, so no instruction can start
// earlier; build_program validated both programs, so neither deadlocks. Except on PipeFB:
// its overlapping program posts stash receives ahead of gradient receives on the
// backward device, and the blocking one posts them in compute order, which can let a
// gradient in earlier; there only validity is checked.
TEST_P(CommOverlap, BlockingIsValidAndNeverFaster) {
  std::mt19937 rng(2024 + GetParam());
  for (int trial = 0; trial < 40; ++trial) {
    const ResolvedScenario setup = random_of_kind(rng, GetParam());
    SCOPED_TRACE("trial " + std::to_string(trial));
    const OverlapRun overlap = run_analytic_with(setup, true);
    const OverlapRun blocking = run_analytic_with(setup, false);
    ASSERT_EQ(overlap.program.size(), blocking.program.size());
    if (GetParam() == proto::PIPEFB) continue;
    EXPECT_GE(blocking.makespan, overlap.makespan * (1 - 1e-12));
    for (int32_t i = 0; i < overlap.program.size(); ++i) {
      ASSERT_GE(blocking.times.start_s[i], overlap.times.start_s[i] * (1 - 1e-12))
          << overlap.program.describe(i);
    }
  }
}

// Blocking: on every device, no compute runs while one of its transfers does, so all of
// its communication is exposed. Interleaved 1F1B, and the asynchronous orders where they
// deadlock the same way, post their receives one compute op ahead or more
// (blocking_transfers.h), so they may overlap that op: exposed <= comm there.
TEST_P(CommOverlap, BlockingExposesAllCommunication) {
  std::mt19937 rng(77 + GetParam());
  const bool pre_posted =
      GetParam() == proto::INTERLEAVED_ONE_F_ONE_B || is_asynchronous(GetParam());
  for (int trial = 0; trial < 40; ++trial) {
    const ResolvedScenario setup = random_of_kind(rng, GetParam());
    SCOPED_TRACE("trial " + std::to_string(trial));
    const OverlapRun blocking = run_analytic_with(setup, false);
    for (const DeviceMetrics& d : blocking.metrics.devices) {
      if (pre_posted) {
        EXPECT_LE(d.exposed_comm_s, d.comm_s * (1 + 1e-12)) << d.name;
        continue;
      }
      EXPECT_DOUBLE_EQ(d.exposed_comm_s, d.comm_s) << d.name;
      if (d.comm_s > 0) {
        EXPECT_NEAR(*d.overlap_ratio, 0.0, 1e-12) << d.name;
      }
    }
    if (!pre_posted) {
      EXPECT_DOUBLE_EQ(blocking.metrics.exposed_comm_s, blocking.metrics.comm_s);
    }
  }
}

// SimGrid's exact mode reproduces the analytic timestamps of blocking programs too: the
// extra dependencies live in the Program, which both executors (and the real backend)
// honour alike.
TEST_P(CommOverlap, SimgridExactModeAgreesWhenBlocking) {
  std::mt19937 rng(555 + GetParam());
  for (int trial = 0; trial < testing::random_trials(12); ++trial) {
    ResolvedScenario setup = random_of_kind(rng, GetParam());
    setup.schedule.comm_overlap = false;
    setup.simgrid.exact = true;
    const Program program = build_program(setup);
    SCOPED_TRACE("trial " + std::to_string(trial) + ": " + std::to_string(program.size()) +
                 " instructions");
    testing::expect_same_times(program, run_analytic(program, setup.cluster),
                               run_simgrid(program, setup.cluster, setup.simgrid));
  }
}

INSTANTIATE_TEST_SUITE_P(Schedules, CommOverlap,
                         ::testing::Values(proto::GPIPE, proto::ONE_F_ONE_B,
                                           proto::INTERLEAVED_ONE_F_ONE_B, proto::UMPIPE,
                                           proto::PIPEFB, proto::PIPEDREAM_ASYNC,
                                           proto::PIPEDREAM_2BW, proto::APAPO),
                         [](const auto& info) { return proto::ScheduleKind_Name(info.param); });

// Equal stages and free links: blocking changes no compute timestamp (each transfer's
// receiver is ready when its sender is, or the sender has nothing to compute meanwhile).
// Transfers themselves may start later: a blocking receive is posted later.
TEST(CommOverlapFree, EqualStagesWithFreeLinksGiveIdenticalComputeTimes) {
  std::mt19937 rng(31);
  for (int trial = 0; trial < 60; ++trial) {
    const auto kind = trial % 2 ? proto::GPIPE : proto::ONE_F_ONE_B;
    const int K = std::uniform_int_distribution<int>(1, 8)(rng);
    const int M = std::uniform_int_distribution<int>(1, 24)(rng);
    const double tf = std::uniform_real_distribution<double>(1e-4, 1e-1)(rng);
    const double tb = std::uniform_real_distribution<double>(1e-4, 2e-1)(rng);
    // uniform_setup: no activation bytes and a zero-latency link, i.e. free transfers.
    const ResolvedScenario setup = testing::uniform_setup(kind, K, M, tf, tb);
    SCOPED_TRACE(proto::ScheduleKind_Name(kind) + " K=" + std::to_string(K) +
                 " M=" + std::to_string(M));
    const OverlapRun overlap = run_analytic_with(setup, true);
    const OverlapRun blocking = run_analytic_with(setup, false);
    EXPECT_DOUBLE_EQ(blocking.makespan, overlap.makespan);
    for (int32_t i = 0; i < overlap.program.size(); ++i) {
      if (overlap.program.instructions[i].lane() != Lane::kCompute) continue;
      ASSERT_DOUBLE_EQ(blocking.times.start_s[i], overlap.times.start_s[i])
          << overlap.program.describe(i);
      ASSERT_DOUBLE_EQ(blocking.times.end_s[i], overlap.times.end_s[i])
          << overlap.program.describe(i);
    }
  }
}

// Even free links do not make a blocking send free: it waits for its receiver to post
// the RECV. GPipe, K=2, M=3, stage 0 forward 1 s, stage 1 forward 3 s: gpu0 sends
// microbatch 1 at t=2, but gpu1 posts that RECV only after its forward of microbatch 0
// (t=1+3), so blocking gpu0 starts forward 2 at t=4 instead of t=2.
TEST(CommOverlapFree, BlockingSendWaitsForItsReceiver) {
  ResolvedScenario setup = testing::uniform_setup(proto::GPIPE, 2, 3, 1, 1);
  setup.model.layers[0].fwd.seconds_per_sample = 1.0 / 4;  // 4 samples per microbatch
  setup.model.layers[1].fwd.seconds_per_sample = 3.0 / 4;
  const OverlapRun overlap = run_analytic_with(setup, true);
  const OverlapRun blocking = run_analytic_with(setup, false);
  auto forward_start = [](const OverlapRun& r, int device, int microbatch) {
    for (int32_t i = 0; i < r.program.size(); ++i) {
      const Instruction& in = r.program.instructions[i];
      if (in.op == Op::kFwd && in.device == device && in.microbatch == microbatch) {
        return r.times.start_s[i];
      }
    }
    return -1.0;
  };
  EXPECT_DOUBLE_EQ(forward_start(overlap, 0, 2), 2.0);
  EXPECT_DOUBLE_EQ(forward_start(blocking, 0, 2), 4.0);
  // gpu1 is the bottleneck: the iteration takes as long.
  EXPECT_DOUBLE_EQ(blocking.makespan, overlap.makespan);
}

// Closed form, GPipe, K=2, M=2, t_f=1, t_b=2, every transfer c=0.25 s (latency only).
// Overlapping, the critical path crosses the link twice (activation of microbatch 1 to
// gpu1, gradient of microbatch 1 back): 3 t_f + 3 t_b + 2c.
// Blocking, by hand (gpu0 | gpu1):
//   F0 [0,1]                  | RECV_A0 = SEND_A0 [1,1.25], F0 [1.25,2.25]
//   F1 [1.25,2.25] (after SEND_A0) | RECV_A1 after its F0: [2.25,2.5], F1 [2.5,3.5]
//                             | B0 [3.5,5.5], SEND_G0 [5.5,5.75]
//   B0 [5.75,7.75]            | B1 [5.75,7.75] (after SEND_G0), SEND_G1 [7.75,8]
//   RECV_G1 after B0: [7.75,8], B1 [8,10]
// i.e. 3 t_f + 3 t_b + 4c = 10: every hop of the critical path is paid once more, since
// the sender's next forward waits for its transfer.
TEST(CommOverlapClosedForm, GpipeTwoStagesTwoMicrobatches) {
  const double tf = 1, tb = 2, c = 0.25;
  ResolvedScenario setup = testing::uniform_setup(proto::GPIPE, 2, 2, tf, tb);
  setup.cluster.intra_node = {1e12, c};  // no activation bytes: every transfer takes c
  EXPECT_DOUBLE_EQ(run_analytic_with(setup, true).makespan, 3 * tf + 3 * tb + 2 * c);
  const OverlapRun blocking = run_analytic_with(setup, false);
  EXPECT_DOUBLE_EQ(blocking.makespan, 3 * tf + 3 * tb + 4 * c);
  // gpu0: SEND_A0, SEND_A1, RECV_G0, RECV_G1, each c, none hidden.
  EXPECT_DOUBLE_EQ(blocking.metrics.devices[0].comm_s, 4 * c);
  EXPECT_DOUBLE_EQ(blocking.metrics.devices[0].exposed_comm_s, 4 * c);
}

// Overlap on a compute-heavy 1F1B pipeline: the middle stages send and receive while they
// compute, so part of their communication is hidden.
TEST(CommOverlapMetrics, OverlapHidesCommunicationOnComputeHeavy1F1B) {
  ResolvedScenario setup = testing::uniform_setup(proto::ONE_F_ONE_B, 4, 8, 10e-3, 20e-3);
  for (ModelLayer& layer : setup.model.layers) layer.activation_bytes_per_sample = 1e6;
  setup.cluster.intra_node = {4e9, 5e-6};  // 4 MB per microbatch: about 1 ms a transfer
  const OverlapRun overlap = run_analytic_with(setup, true);
  const OverlapRun blocking = run_analytic_with(setup, false);
  EXPECT_GT(overlap.metrics.comm_s, 0);
  EXPECT_LT(overlap.metrics.exposed_comm_s, overlap.metrics.comm_s);
  for (const DeviceMetrics& d : overlap.metrics.devices) {
    EXPECT_LT(d.exposed_comm_s, d.comm_s) << d.name;
    EXPECT_GT(*d.overlap_ratio, 0) << d.name;
  }
  EXPECT_GT(blocking.makespan, overlap.makespan);
  EXPECT_DOUBLE_EQ(blocking.metrics.exposed_comm_s, blocking.metrics.comm_s);
}

Span span(int device, const std::string& lane, double start, double end) {
  Span s;
  s.device = device;
  s.lane = lane;
  s.start_s = start;
  s.end_s = end;
  return s;
}

// The interval arithmetic on a hand-built timeline.
TEST(CommOverlapMetrics, ExposedCommunicationOfAHandBuiltTimeline) {
  Timeline t;
  t.devices = {{0, 0, "gpu0"}, {1, 0, "gpu1"}, {2, 0, "gpu2"}};
  // gpu0: compute [0,2] and [3,5]; a send [1,4] and a recv [3.5,6] overlap each other
  // (union [1,6], 5 s), of which [2,3] and [5,6] run beside no compute: 2 s exposed. The
  // copy and collective lanes are not point-to-point communication.
  t.spans = {span(0, "compute", 0, 2),    span(0, "compute", 3, 5), span(0, "send", 1, 4),
             span(0, "recv", 3.5, 6),     span(0, "copy", 0, 10),   span(0, "collective", 6, 8),
             span(1, "compute", 0, 1),    span(2, "recv", 0, 1),    span(2, "compute", 2, 3),
             span(2, "compute", 0.5, 0.5)};  // zero length: hides nothing
  const RunMetrics m = compute_metrics(t, 1, 8);
  EXPECT_DOUBLE_EQ(m.devices[0].comm_s, 5);
  EXPECT_DOUBLE_EQ(m.devices[0].exposed_comm_s, 2);
  EXPECT_DOUBLE_EQ(*m.devices[0].overlap_ratio, 0.6);
  EXPECT_EQ(m.devices[1].comm_s, 0);  // no communication: no ratio
  EXPECT_EQ(m.devices[1].exposed_comm_s, 0);
  EXPECT_FALSE(m.devices[1].overlap_ratio.has_value());
  EXPECT_DOUBLE_EQ(m.devices[2].comm_s, 1);
  EXPECT_DOUBLE_EQ(m.devices[2].exposed_comm_s, 1);
  EXPECT_DOUBLE_EQ(*m.devices[2].overlap_ratio, 0);
  EXPECT_DOUBLE_EQ(m.comm_s, 6);
  EXPECT_DOUBLE_EQ(m.exposed_comm_s, 3);
}

// Against brute force: spans with integer ends on [0, 60), every unit cell counted as
// covered by communication and by compute or not.
TEST(CommOverlapMetrics, ExposedCommunicationMatchesCellCounting) {
  std::mt19937 rng(9);
  std::uniform_int_distribution<int> point(0, 60), count(0, 8), lane(0, 1);
  for (int trial = 0; trial < 300; ++trial) {
    Timeline t;
    t.devices = {{0, 0, "gpu0"}};
    std::vector<int> comm(60, 0), compute(60, 0);
    const int spans = count(rng);
    for (int k = 0; k < spans; ++k) {
      int a = point(rng), b = point(rng);
      if (a > b) std::swap(a, b);
      const bool is_comm = lane(rng) == 1;
      t.spans.push_back(span(0, is_comm ? (k % 2 ? "send" : "recv") : "compute", a, b));
      for (int cell = a; cell < b; ++cell) (is_comm ? comm : compute)[cell] = 1;
    }
    double comm_cells = 0, exposed_cells = 0;
    for (int cell = 0; cell < 60; ++cell) {
      comm_cells += comm[cell];
      exposed_cells += comm[cell] && !compute[cell];
    }
    const RunMetrics m = compute_metrics(t, 1, 1);
    SCOPED_TRACE("trial " + std::to_string(trial));
    EXPECT_DOUBLE_EQ(m.devices[0].comm_s, comm_cells);
    EXPECT_DOUBLE_EQ(m.devices[0].exposed_comm_s, exposed_cells);
    EXPECT_EQ(m.devices[0].overlap_ratio.has_value(), comm_cells > 0);
  }
}

// The command line: `--set schedule.comm_overlap=false`, and the --json fields.
TEST(CommOverlapCli, JsonReportsExposedCommunication) {
  auto simulate = [](const std::string& args) {
    const testing::CliResult r =
        testing::run_pipetwin("simulate builtin:gpt-8gpu-1f1b --json " + args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out);
  };
  const nlohmann::json overlap = simulate("");
  const nlohmann::json blocking = simulate("--set schedule.comm_overlap=false");
  EXPECT_TRUE(overlap["comm_overlap"].get<bool>());
  EXPECT_FALSE(blocking["comm_overlap"].get<bool>());
  EXPECT_GT(blocking["iteration_time_s"].get<double>(), overlap["iteration_time_s"].get<double>());
  EXPECT_LT(overlap["exposed_comm_s"].get<double>(), blocking["exposed_comm_s"].get<double>());
  for (const auto& d : blocking["devices"]) {
    EXPECT_NEAR(d["exposed_comm_s"].get<double>(), d["comm_s"].get<double>(), 1e-12);
    EXPECT_NEAR(d["overlap_ratio"].get<double>(), 0, 1e-9);
  }
  for (const auto& d : overlap["devices"]) {
    ASSERT_TRUE(d.contains("exposed_comm_s") && d.contains("overlap_ratio"));
    EXPECT_GT(d["overlap_ratio"].get<double>(), 0);
  }
  const testing::CliResult text =
      testing::run_pipetwin("simulate builtin:gpt-8gpu-1f1b --set schedule.comm_overlap=false");
  EXPECT_THAT(text.out, ::testing::HasSubstr("blocking transfers"));
  EXPECT_THAT(text.out, ::testing::HasSubstr("exposed comm"));
}

}  // namespace
}  // namespace pipetwin
