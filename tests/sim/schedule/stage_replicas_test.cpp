// Replicated stages (schedule.stage_replicas): the steady state of a 2-stage pipeline with
// replicas (1, 2) in closed form, round-robin ownership of every compute op and transfer,
// the all-reduce among a stage's replicas before each update, the memory each replica
// holds, the device names, and exact SimGrid against the analytic executor on random
// replicated programs.
#include "sim/spec/stage_replicas.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "random_setup.h"
#include "same_times.h"
#include "sim/driver/build_program.h"
#include "sim/exec/analytic_executor.h"
#include "sim/exec/make_timeline.h"
#include "sim/exec/memory_curve.h"
#include "sim/simgrid/simgrid_executor.h"
#include "uniform_setup.h"

namespace pipetwin {
namespace {

double makespan(const ResolvedScenario& setup) {
  const ExecutionTimes t = run_analytic(build_program(setup), setup.cluster);
  return *std::max_element(t.end_s.begin(), t.end_s.end());
}

// Two stages of one layer each on free links: stage 0 takes f0 + b0 per microbatch on its
// one device, stage 1 takes f1 + b1 on each of its two. u: each stage's optimizer step.
ResolvedScenario two_stages(proto::ScheduleKind kind, int M, double f0, double b0, double f1,
                            double b1, double u0 = 0, double u1 = 0) {
  ResolvedScenario setup = testing::uniform_setup(kind, 2, M, 1, 1);
  const int samples = 4;  // uniform_setup's microbatch size
  setup.model.layers[0].fwd.seconds_per_sample = f0 / samples;
  setup.model.layers[0].bwd.seconds_per_sample = b0 / samples;
  setup.model.layers[1].fwd.seconds_per_sample = f1 / samples;
  setup.model.layers[1].bwd.seconds_per_sample = b1 / samples;
  setup.model.layers[0].optim_seconds = u0;
  setup.model.layers[1].optim_seconds = u1;
  setup.schedule.stage_replicas = {1, 2};
  setup.cluster.devices.push_back({2, 0, "gpu2", 1e15, 1e15});
  setup.cluster.gpus_per_node = 3;
  return setup;
}

// Time per microbatch once the pipeline runs steadily: the makespan's growth per added
// microbatch between two long runs.
double steady_seconds_per_microbatch(ResolvedScenario setup) {
  const int M = setup.training.microbatches;
  setup.training.iterations = 20;
  const double shorter = makespan(setup);
  setup.training.iterations = 30;
  return (makespan(setup) - shorter) / (10.0 * M);
}

// PipeDream with replicas (1, 2) and free transfers: stage 0 runs a forward, a backward and
// an update per microbatch; each replica of stage 1 runs every other microbatch. The
// pipeline moves at its slower stage: max(f0 + b0 + u0, (f1 + b1 + u1) / 2) per microbatch,
// whichever stage that is.
TEST(StageReplicas, TwoStagesRunAtTheSlowerStagesShare) {
  const struct {
    double f0, b0, f1, b1, u0, u1;
  } cases[] = {
      {1e-3, 2e-3, 2e-3, 4e-3, 0, 0},            // stage 1 alone would be twice as slow
      {1e-3, 2e-3, 3e-3, 5e-3, 0, 0},            // stage 1 bound
      {2e-3, 3e-3, 2e-3, 4e-3, 0, 0},            // stage 0 bound
      {1e-3, 2e-3, 3e-3, 5e-3, 0.2e-3, 0.5e-3},  // with updates, stage 1 bound
      {2e-3, 3e-3, 2e-3, 4e-3, 0.3e-3, 0.1e-3},  // with updates, stage 0 bound
  };
  for (const auto& c : cases) {
    const double expected = std::max(c.f0 + c.b0 + c.u0, (c.f1 + c.b1 + c.u1) / 2);
    EXPECT_NEAR(steady_seconds_per_microbatch(
                    two_stages(proto::PIPEDREAM_ASYNC, 4, c.f0, c.b0, c.f1, c.b1, c.u0, c.u1)),
                expected, 1e-9 * expected)
        << "f0 " << c.f0 << " b0 " << c.b0 << " f1 " << c.f1 << " b1 " << c.b1;
  }
}

// Stage 1's replicas all-reduce their gradients before each update (a ring of two: bytes /
// bandwidth). An all-reduce shorter than a forward hides behind the next one on the
// collective lane: the steady state is the closed form above, though every update waits
// for its all-reduce.
TEST(StageReplicas, AnAllReduceShorterThanAForwardHides) {
  const double f0 = 1e-3, b0 = 2e-3, f1 = 3e-3, b1 = 5e-3, u1 = 0.5e-3;
  ResolvedScenario setup = two_stages(proto::PIPEDREAM_ASYNC, 4, f0, b0, f1, b1, 0, u1);
  setup.model.layers[1].parameter_bytes = 4'000'000;
  setup.cluster.intra_node = {2e9, 0.0};
  const Program program = build_program(setup);
  int reductions = 0;
  for (int32_t i = 0; i < program.size(); ++i) {
    const Instruction& instr = program.instructions[i];
    if (instr.op != Op::kAllreduce) continue;
    ++reductions;
    EXPECT_EQ(instr.stage, 1);
    const auto members = program.members_of_group(program.group[i]);
    ASSERT_EQ(members.size(), 2u);  // the round's two replicas, microbatches 2n and 2n + 1
    EXPECT_NE(program.instructions[members[0]].device, program.instructions[members[1]].device);
    const double seconds = static_cast<double>(instr.bytes) / 2e9;
    EXPECT_GT(seconds, 0.1 * f1);
    EXPECT_LT(seconds, f1);
  }
  // One update per microbatch on its replica; a round of two shares one all-reduce.
  EXPECT_EQ(reductions, setup.training.microbatches * setup.training.iterations);
  for (int32_t i = 0; i < program.size(); ++i) {
    if (program.instructions[i].op != Op::kOptim || program.instructions[i].stage != 1) continue;
    const auto deps = program.deps_of(i);
    ASSERT_EQ(deps.size(), 1u);
    EXPECT_EQ(program.instructions[deps[0]].op, Op::kAllreduce);
  }
  const double expected = std::max(f0 + b0, (f1 + b1 + u1) / 2);
  EXPECT_NEAR(steady_seconds_per_microbatch(setup), expected, 1e-9 * expected);
}

// PipeDream-2BW updates once per iteration: stage 0 runs M microbatches and an update,
// each replica of stage 1 M / 2 and an update, after their all-reduce.
TEST(StageReplicas, TwoBwUpdatesOncePerIteration) {
  const int M = 8;
  const double f0 = 1e-3, b0 = 2e-3, f1 = 3e-3, b1 = 5e-3, u0 = 1e-3, u1 = 2e-3;
  const double expected = std::max(M * (f0 + b0) + u0, M / 2 * (f1 + b1) + u1) / M;
  EXPECT_NEAR(
      steady_seconds_per_microbatch(two_stages(proto::PIPEDREAM_2BW, M, f0, b0, f1, b1, u0, u1)),
      expected, 1e-9 * expected);
}

// Microbatch j of stage s runs on replica j mod r_s (per iteration for synchronous
// schedules, over the run for asynchronous ones); each transfer goes from the replica that
// produced the microbatch to the one of the next stage that owns it, and gradients back.
TEST(StageReplicas, RoundRobinOwnsComputeAndTransfers) {
  const std::vector<int32_t> counts = {2, 3, 1};
  const StageReplicas replicas(counts);
  for (auto kind :
       {proto::GPIPE, proto::ONE_F_ONE_B, proto::PIPEDREAM_ASYNC, proto::PIPEDREAM_2BW}) {
    ResolvedScenario setup = testing::uniform_setup(kind, 3, 7, 1e-3, 2e-3);
    setup.training.iterations = 3;
    setup.schedule.stage_replicas = counts;
    for (ModelLayer& layer : setup.model.layers) {
      layer.activation_bytes_per_sample = 1000;
      layer.parameter_bytes = 4000;
    }
    setup.cluster.devices.clear();
    for (int d = 0; d < replicas.devices(); ++d) {
      setup.cluster.devices.push_back({d, 0, "gpu" + std::to_string(d), 1e15, 1e15});
    }
    setup.cluster.gpus_per_node = replicas.devices();
    SCOPED_TRACE(proto::ScheduleKind_Name(kind));
    const Program program = build_program(setup);
    const bool run_wide = is_asynchronous(kind);
    const int M = setup.training.microbatches;
    // The instruction's microbatch index is the stage's index within the iteration.
    const auto owner = [&](int32_t stage, const Instruction& instr) {
      const int64_t j =
          run_wide ? int64_t{instr.iteration} * M + instr.microbatch : instr.microbatch;
      return replicas.first_device(stage) + static_cast<int32_t>(j % counts[stage]);
    };
    int transfers = 0;
    for (const Instruction& instr : program.instructions) {
      switch (instr.op) {
        case Op::kFwd:
        case Op::kBwd:
          EXPECT_EQ(instr.device, owner(instr.stage, instr)) << instruction_text(instr, false);
          break;
        case Op::kSendAct:  // stage s to s + 1
          ++transfers;
          EXPECT_EQ(instr.device, owner(instr.stage, instr));
          EXPECT_EQ(instr.peer_device, owner(instr.stage + 1, instr));
          break;
        case Op::kSendGrad:  // stage s to s - 1
          ++transfers;
          EXPECT_EQ(instr.device, owner(instr.stage, instr));
          EXPECT_EQ(instr.peer_device, owner(instr.stage - 1, instr));
          break;
        default:
          break;
      }
    }
    EXPECT_EQ(transfers, 2 * 2 * M * setup.training.iterations);  // two cuts, both ways
    // Every replica holds its stage's weights, gradients and optimizer state.
    for (int32_t s = 0; s < 3; ++s) {
      for (int32_t k = 1; k < counts[s]; ++k) {
        EXPECT_EQ(program.static_bytes[replicas.first_device(s) + k],
                  program.static_bytes[replicas.first_device(s)]);
      }
    }
  }
}

// Synchronous schedules reduce each stage's gradients among its replicas once per
// iteration, before the update that closes it; stage 2 has one device and no all-reduce.
TEST(StageReplicas, SynchronousSchedulesReduceAmongTheStagesReplicasBeforeTheUpdate) {
  const std::vector<int32_t> counts = {2, 3, 1};
  for (auto kind : {proto::GPIPE, proto::ONE_F_ONE_B}) {
    ResolvedScenario setup = testing::uniform_setup(kind, 3, 6, 1e-3, 2e-3);
    setup.training.iterations = 2;
    setup.schedule.stage_replicas = counts;
    for (ModelLayer& layer : setup.model.layers) layer.parameter_bytes = 4000;
    setup.cluster.devices.clear();
    for (int d = 0; d < 6; ++d) setup.cluster.devices.push_back({d, 0, "g", 1e15, 1e15});
    const Program program = build_program(setup);
    std::vector<int> groups_per_stage(3, 0);
    for (int32_t g = 0; g < program.num_groups(); ++g) {
      const Instruction& first = program.instructions[program.members_of_group(g).front()];
      ++groups_per_stage[first.stage];
      EXPECT_EQ(static_cast<int>(program.members_of_group(g).size()), counts[first.stage]);
    }
    EXPECT_THAT(groups_per_stage, ::testing::ElementsAre(2, 2, 0));  // one per iteration
    // Each device's compute lane ends its iteration with its OPTIM.
    for (int d = 0; d < 6; ++d) {
      const int l = d * kLaneCount + static_cast<int>(Lane::kCompute);
      EXPECT_EQ(program.instructions[program.lane_begin[l + 1] - 1].op, Op::kOptim) << d;
    }
  }
}

// The timeline names each device with its stage and replica.
TEST(StageReplicas, DeviceNamesSayStageAndReplica) {
  const ResolvedScenario setup = two_stages(proto::ONE_F_ONE_B, 4, 1e-3, 2e-3, 2e-3, 4e-3);
  const Program program = build_program(setup);
  const ExecutionTimes times = run_analytic(program, setup.cluster);
  const Timeline timeline =
      make_timeline(program, setup.cluster, times, memory_curve(program, times), "analytic");
  ASSERT_EQ(timeline.devices.size(), 3u);
  EXPECT_EQ(timeline.devices[0].name, "gpu0 (stage 0 replica 0)");
  EXPECT_EQ(timeline.devices[1].name, "gpu1 (stage 1 replica 0)");
  EXPECT_EQ(timeline.devices[2].name, "gpu2 (stage 1 replica 1)");
}

// A random scenario with random stage replicas on as many devices, over random nodes.
ResolvedScenario random_replicated(std::mt19937& rng, proto::ScheduleKind kind) {
  ResolvedScenario setup = testing::random_setup(rng, kind);
  auto integer = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  setup.training.data_parallel = 1;
  setup.schedule.stage_replicas.clear();
  for (int s = 0; s < setup.schedule.stages; ++s) {
    setup.schedule.stage_replicas.push_back(integer(1, 3));
  }
  const StageReplicas replicas(setup.schedule.stage_replicas);
  setup.training.microbatches = std::max(
      {setup.training.microbatches, 3, kind == proto::PIPEDREAM_2BW ? setup.schedule.stages : 1});
  setup.training.global_batch = setup.training.microbatches * integer(1, 4);
  const int gpus_per_node = integer(1, replicas.devices());
  setup.cluster.gpus_per_node = gpus_per_node;
  setup.cluster.nodes = (replicas.devices() + gpus_per_node - 1) / gpus_per_node;
  setup.cluster.devices.clear();
  for (int d = 0; d < setup.cluster.nodes * gpus_per_node; ++d) {
    setup.cluster.devices.push_back({d, d / gpus_per_node, "gpu" + std::to_string(d),
                                     std::uniform_real_distribution<double>(50, 500)(rng) * 1e12,
                                     1e15});
  }
  return setup;
}

// Exact mode reproduces the analytic timestamps on replicated programs of every schedule
// that takes them, overlapped and blocking, over one or several nodes.
TEST(StageReplicas, SimgridExactEqualsAnalytic) {
  std::mt19937 rng(2024);
  const proto::ScheduleKind kinds[] = {proto::GPIPE, proto::ONE_F_ONE_B, proto::PIPEDREAM_ASYNC,
                                       proto::PIPEDREAM_2BW, proto::APAPO};
  for (int trial = 0; trial < 30; ++trial) {
    const proto::ScheduleKind kind = kinds[trial % 5];
    ResolvedScenario setup = random_replicated(rng, kind);
    setup.training.iterations = 1 + trial % 3;
    setup.schedule.max_staleness = trial % 4;
    setup.schedule.comm_overlap = trial % 2 == 0;
    setup.simgrid.exact = true;
    const Program program = build_program(setup);
    SCOPED_TRACE("trial " + std::to_string(trial) + ", " + proto::ScheduleKind_Name(kind));
    testing::expect_same_times(program, run_analytic(program, setup.cluster),
                               run_simgrid(program, setup.cluster, setup.simgrid));
  }
}

}  // namespace
}  // namespace pipetwin
