// Default mode models contention: flows that share a link share its bandwidth (max-min
// fair). Expected times are computed by hand from the fabric in sim/cluster/topology.h.
#include <gtest/gtest.h>

#include <random>

#include "random_setup.h"
#include "random_trials.h"
#include "sim/driver/build_program.h"
#include "sim/exec/analytic_executor.h"
#include "sim/simgrid/flow_probe.h"
#include "sim/simgrid/simgrid_executor.h"
#include "uniform_setup.h"

namespace pipetwin {
namespace {

constexpr double kGB = 1e9;

ClusterSpec cluster(int nodes, int gpus_per_node) {
  ClusterSpec c;
  c.nodes = nodes;
  c.gpus_per_node = gpus_per_node;
  for (int d = 0; d < nodes * gpus_per_node; ++d) {
    c.devices.push_back({d, d / gpus_per_node, "gpu" + std::to_string(d), 1e14, 1e12});
  }
  c.intra_node = {100 * kGB, 2e-6};
  c.inter_node = {25 * kGB, 6e-6};
  c.host_link = {32 * kGB, 1e-6};
  return c;
}

TEST(SimgridContention, TwoTransfersThroughOneNic) {
  ClusterSpec c = cluster(2, 2);
  c.fabric.nics_per_node = 1;  // both GPUs of a node share its NIC
  const double bytes = 1e9;
  const auto finish = simulate_flows(Topology::shared(c), c, {{0, 2, bytes}, {1, 3, bytes}});
  // Each flow gets half the NIC: latency + bytes / (25 GB/s / 2) = 6 us + 80 ms.
  for (double t : finish) EXPECT_NEAR(t, 6e-6 + bytes / (12.5 * kGB), 1e-12);
  // With a NIC per GPU (rail) they do not meet: latency + bytes / 25 GB/s.
  c.fabric.nics_per_node = 0;
  for (double t : simulate_flows(Topology::shared(c), c, {{0, 2, bytes}, {1, 3, bytes}})) {
    EXPECT_NEAR(t, 6e-6 + bytes / (25 * kGB), 1e-12);
  }
}

TEST(SimgridContention, OffloadOfFourGpusThroughOnePcieSwitch) {
  ClusterSpec c = cluster(1, 4);
  const double bytes = 2e9;
  std::vector<Flow> offload;
  for (int d = 0; d < 4; ++d) offload.push_back({d, Topology::shared(c).host_endpoint(0), bytes});
  c.fabric.gpus_per_host_link = 4;  // one switch uplink for all four
  for (double t : simulate_flows(Topology::shared(c), c, offload)) {
    EXPECT_NEAR(t, 1e-6 + 4 * bytes / (32 * kGB), 1e-12);  // 250 ms: a quarter each
  }
  c.fabric.gpus_per_host_link = 2;  // two switches, two GPUs behind each
  for (double t : simulate_flows(Topology::shared(c), c, offload)) {
    EXPECT_NEAR(t, 1e-6 + 2 * bytes / (32 * kGB), 1e-12);
  }
  // A flow that starts when the others are half done finishes later than they do:
  // 0..62.5 ms 2 flows share (1 GB each done), then 3 flows; by hand with max-min.
  c.fabric.gpus_per_host_link = 4;
  const double gb = 1e9;
  const auto late =
      simulate_flows(Topology::shared(c), c, {{0, 4, gb}, {1, 4, gb}, {2, 4, gb, 0.03125}});
  // Flows 0 and 1: 16 GB/s each until 31.25 ms (0.5 GB done, minus latency), then 32/3 GB/s.
  const double lat = 1e-6;
  const double phase1 = 0.03125 - lat;         // flows 0,1 transfer at 16 GB/s
  const double left = gb - phase1 * 16 * kGB;  // each still to send
  // Flow 2 starts moving bytes at 31.25 ms + lat; until then 0 and 1 keep 16 GB/s.
  const double t2 = 0.03125 + lat;
  const double left_at_t2 = left - lat * 16 * kGB;
  const double first_done = t2 + left_at_t2 / (32 * kGB / 3);
  EXPECT_NEAR(late[0], first_done, 1e-9);
  EXPECT_NEAR(late[1], first_done, 1e-9);
  // Flow 2 had (first_done - t2) * 32/3 GB/s, then the whole link.
  const double sent2 = (first_done - t2) * 32 * kGB / 3;
  EXPECT_NEAR(late[2], first_done + (gb - sent2) / (32 * kGB), 1e-9);
}

TEST(SimgridContention, FatTreeWithOversubscription) {
  ClusterSpec c = cluster(4, 1);  // one GPU and one NIC per node
  c.fabric.inter = InterNodeFabric::kFatTree;
  c.fabric.nodes_per_leaf = 2;
  const double bytes = 1e9;
  const std::vector<Flow> across = {{0, 2, bytes}, {1, 3, bytes}};  // both leave leaf 0
  c.fabric.oversubscription = 1;  // uplink = 2 NICs' worth: no contention
  for (double t : simulate_flows(Topology::shared(c), c, across)) {
    EXPECT_NEAR(t, 6e-6 + bytes / (25 * kGB), 1e-12);
  }
  c.fabric.oversubscription = 2;  // uplink = 1 NIC's worth, shared by two flows
  for (double t : simulate_flows(Topology::shared(c), c, across)) {
    EXPECT_NEAR(t, 6e-6 + bytes / (12.5 * kGB), 1e-12);
  }
  // Inside one leaf the uplink is not used.
  for (double t : simulate_flows(Topology::shared(c), c, {{0, 1, bytes}, {2, 3, bytes}})) {
    EXPECT_NEAR(t, 6e-6 + bytes / (25 * kGB), 1e-12);
  }
}

TEST(SimgridContention, PcieSwitchSharesGpuToGpuTraffic) {
  ClusterSpec c = cluster(1, 4);
  c.fabric.intra = IntraNodeFabric::kPcieSwitch;
  const double bytes = 1e9;
  for (double t : simulate_flows(Topology::shared(c), c, {{0, 1, bytes}, {2, 3, bytes}})) {
    EXPECT_NEAR(t, 2e-6 + bytes / (50 * kGB), 1e-12);  // the switch is shared
  }
  c.fabric.intra = IntraNodeFabric::kNvSwitch;
  for (double t : simulate_flows(Topology::shared(c), c, {{0, 1, bytes}, {2, 3, bytes}})) {
    EXPECT_NEAR(t, 2e-6 + bytes / (100 * kGB), 1e-12);  // ports are private
  }
}

// On whole programs: default mode is never faster than analytic, and strictly slower
// where flows share a link.
TEST(SimgridContention, NeverFasterThanAnalytic) {
  std::mt19937 rng(77);
  for (auto kind : {proto::GPIPE, proto::ONE_F_ONE_B, proto::INTERLEAVED_ONE_F_ONE_B}) {
    for (int trial = 0; trial < testing::random_trials(15); ++trial) {
      ResolvedScenario setup = testing::random_setup(rng, kind);
      setup.cluster.fabric.nics_per_node = 1;
      setup.cluster.fabric.intra =
          trial % 2 ? IntraNodeFabric::kPcieSwitch : IntraNodeFabric::kNvSwitch;
      const Program program = build_program(setup);
      const ExecutionTimes analytic = run_analytic(program, setup.cluster);
      const ExecutionTimes shared = run_simgrid(program, setup.cluster, setup.simgrid);
      for (int32_t i = 0; i < program.size(); ++i) {
        ASSERT_GE(shared.end_s[i], analytic.end_s[i] * (1 - 1e-12)) << program.describe(i);
      }
    }
  }
}

TEST(SimgridContention, StrictlySlowerWhenFlowsShareANic) {
  // Interleaved over 2 nodes of 2 GPUs with one NIC each: gpu1 -> gpu2 activations and
  // gpu0 -> gpu3 gradients (the wrap-around) both leave node 0 through its NIC.
  ResolvedScenario setup =
      testing::uniform_setup(proto::INTERLEAVED_ONE_F_ONE_B, 4, 8, 0.01, 0.02, /*v=*/2);
  setup.cluster = cluster(2, 2);
  setup.cluster.fabric.nics_per_node = 1;
  for (ModelLayer& layer : setup.model.layers) {
    layer.activation_bytes_per_sample = 5e7;  // transfers long enough to overlap
  }
  const Program program = build_program(setup);
  const ExecutionTimes shared = run_simgrid(program, setup.cluster, setup.simgrid);
  const ExecutionTimes rail = [&] {
    ResolvedScenario r = setup;
    r.cluster.fabric.nics_per_node = 0;
    return run_simgrid(program, r.cluster, r.simgrid);
  }();
  double shared_makespan = 0, rail_makespan = 0, analytic_makespan = 0;
  const ExecutionTimes a = run_analytic(program, setup.cluster);
  for (int32_t i = 0; i < program.size(); ++i) {
    shared_makespan = std::max(shared_makespan, shared.end_s[i]);
    rail_makespan = std::max(rail_makespan, rail.end_s[i]);
    analytic_makespan = std::max(analytic_makespan, a.end_s[i]);
  }
  EXPECT_GT(shared_makespan, analytic_makespan * (1 + 1e-3));
  EXPECT_NEAR(rail_makespan, analytic_makespan, 1e-9 * analytic_makespan);
}

}  // namespace
}  // namespace pipetwin
