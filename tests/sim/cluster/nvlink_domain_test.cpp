// NVLink domains of several nodes (cluster.nvlink_domain_nodes, the GB200/GB300 NVL72 racks):
// GPUs of one domain reach each other over NVLink in both engines (ClusterSpec::link for the
// analytic one, the NVSwitch ports of the shared topology for SimGrid), the others over their
// NICs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/driver/build_program.h"
#include "sim/cluster/topology.h"
#include "sim/exec/program_collectives.h"
#include "sim/program/program.h"
#include "sim/scenario/loaded_scenario.h"
#include "sim/scenario/resolve_scenario.h"
#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

using ::testing::HasSubstr;

// A small mixture-of-experts model with tensor parallelism 8 and expert parallelism 8 on 16
// trays of 4 GPUs: one group of 64 GPUs, inside one NVL72 rack.
const char* kMoeOnTrays = R"(
cluster { preset: "gb200-nvl72" nodes: 16 }
model {
  zoo {
    name: "transformer" layers: 2 hidden: 1024 heads: 16 vocab: 32000 seq_len: 1024
    ffn_hidden: 2048 moe { experts: 8 top_k: 2 expert_ffn_hidden: 1024 }
  }
}
training {
  global_batch: 64 microbatches: 4 data_parallel: 8 tensor_parallel: 8 expert_parallel: 8
  precision: BF16 mixed_precision: true
}
schedule { kind: ONE_F_ONE_B stages: 1 }
)";

// Flows of every collective of the Program that cross a NIC, and all flows.
std::pair<int, int> nic_flows(const std::vector<std::string>& overrides) {
  const ResolvedScenario setup =
      resolve_scenario(parse_scenario(kMoeOnTrays, "moe", ".", false, overrides));
  const Program p = build_program(setup);
  const Topology topology = Topology::shared(setup.cluster);
  int crossing = 0, all = 0;
  for (int32_t g = 0; g < p.num_groups(); ++g) {
    for (const FlowPhase& phase : group_flows(p, setup.cluster, g)) {
      for (const PointFlow& flow : phase.flows) {
        ++all;
        for (const LinkHop& hop : topology.route(flow.from, flow.to)) {
          if (topology.links()[hop.link].name.rfind("nic", 0) == 0) {
            ++crossing;
            break;
          }
        }
        EXPECT_EQ(&setup.cluster.nominal_link(flow.from, flow.to) == &setup.cluster.intra_node,
                  setup.cluster.same_nvlink_domain(flow.from, flow.to));
      }
    }
  }
  return {crossing, all};
}

TEST(NvlinkDomain, TensorAndExpertGroupsInsideOneRackNeverCrossTheNics) {
  const auto [crossing, all] = nic_flows({});
  EXPECT_GT(all, 0);
  EXPECT_EQ(crossing, 0);
}

TEST(NvlinkDomain, WithoutTheDomainTheSameGroupsCrossTheTrays) {
  const auto [crossing, all] =
      nic_flows({"cluster.nvlink_domain_nodes=1", "training.tensor_parallel=4",
                 "training.data_parallel=16", "training.global_batch=128"});
  EXPECT_GT(crossing, 0);
  EXPECT_LT(crossing, all);  // a tray's 4 GPUs still share NVLink
}

// Expert all-to-alls (TP 4, EP 16) with two pipeline stages on 32 trays, 16 per domain:
// pipetwin's order puts a replica's two stages on consecutive GPUs, so each expert group of 16
// replicas spans both domains; Megatron-Core's (tp-cp-ep-dp-pp) puts a stage's replicas together,
// each expert group inside one domain.
int crossing_all_to_all_flows(const std::string& order) {
  const ResolvedScenario setup = resolve_scenario(parse_scenario(
      kMoeOnTrays, "moe", ".", false,
      {"cluster.nodes=32", "cluster.nvlink_domain_nodes=16", "training.tensor_parallel=4",
       "training.data_parallel=16", "training.expert_parallel=16", "model.zoo.moe.experts=16",
       "training.global_batch=64", "schedule.stages=2", "training.rank_order=" + order}));
  const Program p = build_program(setup);
  const Topology topology = Topology::shared(setup.cluster);
  int crossing = 0;
  for (int32_t g = 0; g < p.num_groups(); ++g) {
    if (p.instructions[p.members_of_group(g).front()].op != Op::kAllToAll) continue;
    for (const FlowPhase& phase : group_flows(p, setup.cluster, g)) {
      for (const PointFlow& flow : phase.flows) {
        crossing += !setup.cluster.same_nvlink_domain(flow.from, flow.to);
        for (const LinkHop& hop : topology.route(flow.from, flow.to)) {
          if (topology.links()[hop.link].name.rfind("nic", 0) == 0) {
            EXPECT_FALSE(setup.cluster.same_nvlink_domain(flow.from, flow.to));
          }
        }
      }
    }
  }
  return crossing;
}

TEST(NvlinkDomain, MegatronsRankOrderKeepsExpertGroupsInsideTheDomain) {
  EXPECT_GT(crossing_all_to_all_flows("TP_CP_PP_DP"), 0);
  EXPECT_EQ(crossing_all_to_all_flows("TP_CP_EP_DP_PP"), 0);
}

// The placement permutes nodes only: the same device numbers, the same Program, every node
// holding gpus_per_node devices.
TEST(NvlinkDomain, MegatronsRankOrderPermutesTheNodesOfTheSameDevices) {
  const ResolvedScenario setup = resolve_scenario(
      parse_scenario(kMoeOnTrays, "moe", ".", false,
                     {"schedule.stages=2", "training.data_parallel=4", "training.expert_parallel=4",
                      "training.global_batch=32", "training.rank_order=TP_CP_EP_DP_PP"}));
  std::vector<int> per_node(16, 0);
  for (const DeviceSpec& d : setup.cluster.devices) {
    ASSERT_LT(d.node, 16);
    ++per_node[d.node];
  }
  for (int n : per_node) EXPECT_EQ(n, 4);
  // Device 8 (stage 1 of replica 0, TP 8) is Megatron's rank 32: tray 8.
  EXPECT_EQ(setup.cluster.devices[8].node, 8);
  EXPECT_EQ(setup.cluster.devices[8].slot, 0);
}

TEST(NvlinkDomain, TensorParallelismMaySpanTheDomain) {
  const ResolvedScenario setup =
      resolve_scenario(parse_scenario(kMoeOnTrays, "moe", ".", false, {}));
  EXPECT_EQ(setup.training.tensor_parallel, 8);  // beyond a tray's 4 GPUs
  const ResolvedScenario racks =
      resolve_scenario(parse_scenario(kMoeOnTrays, "moe", ".", false, {"cluster.nodes=36"}));
  EXPECT_TRUE(racks.cluster.same_nvlink_domain(0, 71));    // tray 0 and tray 17: one rack
  EXPECT_FALSE(racks.cluster.same_nvlink_domain(71, 72));  // the next rack
  EXPECT_EQ(&racks.cluster.nominal_link(0, 72), &racks.cluster.inter_node);
  try {
    resolve_scenario(
        parse_scenario(kMoeOnTrays, "moe", ".", false, {"cluster.intra_node.kind=PCIE_SWITCH"}));
    FAIL() << "a PCIe switch cannot span trays";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("cluster.nvlink_domain_nodes"));
  }
}

}  // namespace
}  // namespace pipetwin
