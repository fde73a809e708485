// Slow and mixed hardware (cluster.overrides, cluster.node_groups) against closed forms: a slow
// stage of a GPipe pipeline, a slow link in a ring all-reduce; both engines; the balanced
// partition over unequal devices.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "sim/driver/build_program.h"
#include "sim/exec/analytic_executor.h"
#include "sim/network/network_model.h"
#include "sim/planner/pipedream_planner.h"
#include "sim/planner/planner_problem.h"
#include "sim/scenario/loaded_scenario.h"
#include "sim/scenario/resolve_scenario.h"
#include "sim/simgrid/simgrid_executor.h"
#include "sim/spec/errors.h"
#include "tests/support/same_times.h"

namespace pipetwin {
namespace {

// Four stages of two layers, f = 2 ms and b = 4 ms per stage and microbatch, no bytes to move.
constexpr char kFourStages[] = R"pb(
  cluster {
    nodes: 1
    gpus_per_node: 4
    gpu { peak_tflops: 100 memory_gib: 80 }
    intra_node { bandwidth_gbytes_per_s: 100 latency_us: 0 }
  }
  model {
    layers { fwd_ms: 1 bwd_ms: 2 }
    layers { fwd_ms: 1 bwd_ms: 2 }
    layers { fwd_ms: 1 bwd_ms: 2 }
    layers { fwd_ms: 1 bwd_ms: 2 }
    layers { fwd_ms: 1 bwd_ms: 2 }
    layers { fwd_ms: 1 bwd_ms: 2 }
    layers { fwd_ms: 1 bwd_ms: 2 }
    layers { fwd_ms: 1 bwd_ms: 2 }
  }
  training { global_batch: 8 microbatches: 8 }
  schedule { kind: GPIPE stages: 4 }
)pb";

ResolvedScenario resolved(const std::string& text, const std::vector<std::string>& sets = {}) {
  return resolve_scenario(parse_scenario(text, "speeds", ".", false, sets));
}

double makespan(const ExecutionTimes& times) {
  return *std::max_element(times.end_s.begin(), times.end_s.end());
}

double analytic_step(const ResolvedScenario& setup) {
  return makespan(run_analytic(build_program(setup), setup.cluster));
}

// A flow shop of identical microbatches: forwards take sum(f) + (M - 1) max(f), then the
// backwards the same with b. One stage at speed s: (K - 1)(f + b) + M (f + b) / s.
TEST(DeviceSpeeds, ASlowStageLengthensGpipeByTheClosedForm) {
  const double f = 2e-3, b = 4e-3;
  const int K = 4, M = 8;
  EXPECT_NEAR(analytic_step(resolved(kFourStages)), (M + K - 1) * (f + b), 1e-12);
  for (const double s : {0.5, 0.8, 1.25}) {
    const ResolvedScenario setup =
        resolved(kFourStages, {"schedule.partition=[2,2,2,2]", "cluster.overrides[0].devices=2",
                               "cluster.overrides[0].compute_scale=" + std::to_string(s)});
    const double slow = std::max(1.0, 1 / s);  // the slowest stage sets the pace
    const double expected = (K - 1) * (f + b) + (M - 1) * (f + b) * slow + (f + b) / s;
    EXPECT_NEAR(analytic_step(setup), expected, 1e-12) << "s=" << s;
  }
}

TEST(DeviceSpeeds, SimgridTimesASlowStageAsTheAnalyticEngine) {
  testing::expect_exact_simgrid_equals_analytic(resolved(
      kFourStages, {"cluster.overrides[0].devices=1,3", "cluster.overrides[0].compute_scale=0.6",
                    "cluster.overrides[1].devices=3", "cluster.overrides[1].compute_scale=0.5"}));
}

TEST(DeviceSpeeds, LaterOverridesMultiplyEarlierOnes) {
  const ResolvedScenario setup = resolved(
      kFourStages, {"cluster.overrides[0].devices=1,3", "cluster.overrides[0].compute_scale=0.6",
                    "cluster.overrides[1].devices=3", "cluster.overrides[1].compute_scale=0.5"});
  EXPECT_DOUBLE_EQ(setup.cluster.devices[0].compute_scale, 1);
  EXPECT_DOUBLE_EQ(setup.cluster.devices[1].compute_scale, 0.6);
  EXPECT_DOUBLE_EQ(setup.cluster.devices[3].compute_scale, 0.3);
}

// The balanced partition weighs each stage by its device: at half speed, device 2 gets one
// layer where the others get two or three, and the step beats the even split.
TEST(DeviceSpeeds, TheBalancedPartitionGivesASlowDeviceFewerLayers) {
  const std::vector<std::string> slow = {"cluster.overrides[0].devices=2",
                                         "cluster.overrides[0].compute_scale=0.5"};
  const ResolvedScenario setup = resolved(kFourStages, slow);
  EXPECT_EQ(chunk_speeds(setup), (std::vector<double>{1, 1, 0.5, 1}));
  const std::vector<int32_t> counts = place_layers(setup);
  EXPECT_EQ(counts[2], 1);
  std::vector<std::string> even = slow;
  even.push_back("schedule.partition=[2,2,2,2]");
  EXPECT_LT(analytic_step(setup), analytic_step(resolved(kFourStages, even)));
}

// Data parallelism: replica 1's copy of the stage is the slow one, and every replica waits for
// it at the gradient all-reduce; the partition follows the slowest GPU of each stage.
TEST(DeviceSpeeds, ASlowReplicaHoldsBackItsStageInEveryReplica) {
  const std::vector<std::string> dp = {"training.data_parallel=2", "schedule.stages=2",
                                       "schedule.partition=[4,4]", "training.global_batch=16"};
  std::vector<std::string> slow = dp;
  slow.insert(slow.end(),
              {"cluster.overrides[0].devices=3", "cluster.overrides[0].compute_scale=0.5"});
  const double f = 4e-3, b = 8e-3;
  const int K = 2, M = 8;
  EXPECT_NEAR(analytic_step(resolved(kFourStages, dp)), (M + K - 1) * (f + b), 1e-12);
  // Replica 1 runs stages 0 and 1 on devices 2 and 3: its stage 1 at half speed.
  EXPECT_NEAR(analytic_step(resolved(kFourStages, slow)), (f + b) + M * (f + b) * 2, 1e-12);
  std::vector<std::string> balanced = slow;
  balanced.erase(balanced.begin() + 2);  // no explicit partition
  EXPECT_EQ(chunk_speeds(resolved(kFourStages, balanced)), (std::vector<double>{1, 0.5}));
}

// A ring all-reduce steps in lock step: one slow port sets every step, so the ring takes what
// it would on a cluster whose links all ran at that speed.
TEST(DeviceSpeeds, ASlowLinkSetsTheRingAllReducesTime) {
  const ResolvedScenario slow = resolved(
      kFourStages, {"cluster.overrides[0].devices=1", "cluster.overrides[0].link_scale=0.25",
                    "cluster.overrides[0].latency_scale=3", "cluster.intra_node.latency_us=2"});
  const ResolvedScenario uniform =
      resolved(kFourStages,
               {"cluster.intra_node.bandwidth_gbytes_per_s=25", "cluster.intra_node.latency_us=4"});
  const std::vector<int32_t> ring = {0, 1, 2, 3};
  const int64_t bytes = 64 << 20;
  const double expected = collective_seconds(uniform.cluster, kProgramAllReduce, ring, bytes);
  EXPECT_NEAR(collective_seconds(slow.cluster, kProgramAllReduce, ring, bytes), expected,
              1e-12 * expected);
  // Ports: 2 us each way, device 1's at 3 x: a hop to or from it crosses (1 + 3) / 2 x 2 us.
  EXPECT_DOUBLE_EQ(slow.cluster.link(0, 1).latency_s, 4e-6);
  EXPECT_DOUBLE_EQ(slow.cluster.link(0, 2).latency_s, 2e-6);
  EXPECT_DOUBLE_EQ(slow.cluster.link(2, 1).bandwidth_bytes_per_s, 25e9);
  // Under NCCL's model too: the slowest link stretches the lock step.
  const ResolvedScenario nccl = resolved(
      kFourStages, {"cluster.overrides[0].devices=1", "cluster.overrides[0].link_scale=0.25",
                    "cluster.collectives.model=NCCL"});
  const ResolvedScenario nccl_even = resolved(kFourStages, {"cluster.collectives.model=NCCL"});
  EXPECT_GT(collective_seconds(nccl.cluster, kProgramAllReduce, ring, bytes),
            2 * collective_seconds(nccl_even.cluster, kProgramAllReduce, ring, bytes));
}

// SimGrid's own links (shared topology, not exact mode): the slow port is a platform link of
// a quarter the bandwidth, and the data-parallel all-reduce takes the analytic engine's time.
TEST(DeviceSpeeds, SimgridsPlatformCarriesTheSlowPort) {
  ResolvedScenario setup = resolved(
      kFourStages, {"training.data_parallel=4", "schedule.stages=1", "training.global_batch=32",
                    "model.layers[0].parameter_bytes=400000000", "cluster.overrides[0].devices=1",
                    "cluster.overrides[0].link_scale=0.25"});
  const Program program = build_program(setup);
  const double analytic = makespan(run_analytic(program, setup.cluster));
  const double simgrid = makespan(run_simgrid(program, setup.cluster, setup.simgrid));
  EXPECT_NEAR(simgrid, analytic, 1e-3 * analytic);
  const ResolvedScenario even = resolved(
      kFourStages, {"training.data_parallel=4", "schedule.stages=1", "training.global_batch=32",
                    "model.layers[0].parameter_bytes=400000000"});
  EXPECT_GT(analytic, analytic_step(even));
}

// PipeDream's and APapo's planner (`pipetwin plan`): the slow device is a class of its own at
// its speed, and the plan keeps the heavy stages off it.
TEST(DeviceSpeeds, ThePlannerSeesTheSlowDevice) {
  const ResolvedScenario setup = resolved(
      kFourStages, {"cluster.overrides[0].devices=2", "cluster.overrides[0].compute_scale=0.25",
                    "model.layers[0].fwd_ms=4", "model.layers[0].bwd_ms=8"});
  PlannerProblem p = planner_problem(setup);
  ASSERT_EQ(p.layer_seconds.size(), 2u);
  EXPECT_EQ(p.device_class, (std::vector<int>{0, 0, 1, 0}));
  for (size_t l = 0; l < p.layer_seconds[0].size(); ++l) {
    EXPECT_DOUBLE_EQ(p.layer_seconds[1][l], 4 * p.layer_seconds[0][l]);
  }
  p.straight = true;
  const PipedreamPlan plan = plan_pipedream(p);
  for (const PlannedStage& stage : plan.stages) {
    if (std::find(stage.devices.begin(), stage.devices.end(), 2) == stage.devices.end()) continue;
    EXPECT_EQ(std::find(stage.layers.begin(), stage.layers.end(), 0), stage.layers.end())
        << "the heavy first layer went to the slow device";
  }
}

// H100 nodes with H200 and B200 nodes: each GPU its own peak and memory; the resolved
// cluster simulates on both engines and the partition leans on the faster nodes.
constexpr char kMixed[] = R"pb(
  cluster {
    preset: "dgx-h100"
    nodes: 3
    node_groups { nodes: "1" preset: "dgx-h200" }
    node_groups {
      nodes: "2"
      preset: "dgx-b200"
      gpu { memory_gib: 150 }
    }
  }
  model { zoo { name: "gpt" layers: 24 hidden: 2048 heads: 16 seq_len: 2048 vocab: 50257 } }
  training { global_batch: 48 microbatches: 12 tensor_parallel: 8 }
  schedule { kind: ONE_F_ONE_B stages: 3 }
)pb";

TEST(DeviceSpeeds, NodeGroupsGiveEachNodeItsGpu) {
  const ResolvedScenario setup = resolved(kMixed);
  constexpr double kGiB = 1024.0 * 1024 * 1024;
  EXPECT_DOUBLE_EQ(setup.cluster.devices[0].memory_bytes, 80 * kGiB);
  EXPECT_DOUBLE_EQ(setup.cluster.devices[8].memory_bytes, 141 * kGiB);
  EXPECT_DOUBLE_EQ(setup.cluster.devices[8].peak_flops, setup.cluster.devices[0].peak_flops);
  EXPECT_DOUBLE_EQ(setup.cluster.devices[23].memory_bytes, 150 * kGiB);
  EXPECT_GT(setup.cluster.devices[16].peak_flops, 2 * setup.cluster.devices[0].peak_flops);
  const std::vector<int32_t> counts = place_layers(setup);
  EXPECT_GT(counts[2], counts[1]);  // the B200 stage takes more of the 24 layers
  EXPECT_GT(counts[2], counts[0]);
  EXPECT_EQ(chunk_speeds(setup)[0], chunk_speeds(setup)[1]);  // H100 and H200: one dense peak
}

TEST(DeviceSpeeds, MixedNodesSimulateOnBothEngines) {
  testing::expect_exact_simgrid_equals_analytic(resolved(kMixed));
}

// Bad lists, factors and groups: refused naming the field (exit 2 on the command line).
TEST(DeviceSpeeds, BadOverridesAndGroupsNameTheirField) {
  const auto refused = [](const std::string& text, const std::vector<std::string>& sets,
                          const std::string& field, const std::string& problem) {
    try {
      resolved(text, sets);
      ADD_FAILURE() << field << " accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(field + ": "), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(problem), std::string::npos) << e.what();
    }
  };
  refused(kFourStages, {"cluster.overrides[0].devices=3-1"}, "cluster.overrides[0].devices",
          "not an id or a range");
  refused(kFourStages, {"cluster.overrides[0].devices=4"}, "cluster.overrides[0].devices",
          "no id 4 among 4");
  refused(kFourStages, {"cluster.overrides[0].devices=x"}, "cluster.overrides[0].devices",
          "not an id");
  refused(kFourStages, {"cluster.overrides[0].compute_scale=0.5"}, "cluster.overrides[0].devices",
          "missing");
  refused(kFourStages, {"cluster.overrides[0].devices=1", "cluster.overrides[0].link_scale=-1"},
          "cluster.overrides[0].link_scale", "positive factor");
  refused(kFourStages, {"cluster.overrides[0].devices=1", "cluster.overrides[0].compute_scale=inf"},
          "cluster.overrides[0].compute_scale", "positive factor");
  refused(kMixed, {"cluster.node_groups[0].nodes=3"}, "cluster.node_groups[0].nodes", "no id 3");
  refused(kMixed, {"cluster.node_groups[1].preset=dgx-b201"}, "cluster.node_groups[1].preset",
          "unknown preset");
  refused(kMixed, {"training.precision=FP8", "cluster.node_groups[0].preset=dgx-a100"},
          "cluster.node_groups[0].preset", "no tensor cores for training.precision FP8");
}

}  // namespace
}  // namespace pipetwin
