// NVLink domains of several nodes (cluster.nvlink_domain_nodes, the GB200/GB300 NVL72 racks):
// GPUs of one domain reach each other over NVLink in both engines (ClusterSpec::link for the
// analytic one, the NVSwitch ports of the shared topology for SimGrid), the others over their
// NICs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/build_program.h"
#include "sim/cluster/topology.h"
#include "sim/exec/program_collectives.h"
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
        EXPECT_EQ(&setup.cluster.link(flow.from, flow.to) == &setup.cluster.intra_node,
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

TEST(NvlinkDomain, TensorParallelismMaySpanTheDomain) {
  const ResolvedScenario setup =
      resolve_scenario(parse_scenario(kMoeOnTrays, "moe", ".", false, {}));
  EXPECT_EQ(setup.training.tensor_parallel, 8);  // beyond a tray's 4 GPUs
  const ResolvedScenario racks =
      resolve_scenario(parse_scenario(kMoeOnTrays, "moe", ".", false, {"cluster.nodes=36"}));
  EXPECT_TRUE(racks.cluster.same_nvlink_domain(0, 71));    // tray 0 and tray 17: one rack
  EXPECT_FALSE(racks.cluster.same_nvlink_domain(71, 72));  // the next rack
  EXPECT_EQ(&racks.cluster.link(0, 72), &racks.cluster.inter_node);
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
