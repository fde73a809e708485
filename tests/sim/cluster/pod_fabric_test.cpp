// Oversubscribed pods (an inter_node FAT_TREE whose leaves are pods, as Llama 3's RoCE cluster:
// full bisection inside a pod, 1:7 above): data-parallel groups that cross pods slow in both
// engines. SimGrid shares each pod's uplink among the flows leaving it; the analytic engine,
// which sees no contention, gives a flow between pods its NIC's share of the uplink when every
// NIC of the pod sends out at once (ClusterSpec::inter_leaf), a bound SimGrid stays within.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/scenario/loaded_scenario.h"
#include "sim/scenario/resolve_scenario.h"
#include "sim/driver/simulate.h"

namespace pipetwin {
namespace {

// A GPT with tensor parallelism 8 in each of 4 nodes, 4 data-parallel replicas: each of the 8
// data-parallel groups (one per tensor-parallel rank) spans the 4 nodes; pods of 2 nodes.
const char* kPods = R"(
cluster {
  preset: "h100-roce-24k" nodes: 4
  inter_node { nodes_per_leaf: 2 }
}
model { zoo { name: "gpt" layers: 4 hidden: 4096 seq_len: 1024 heads: 32 vocab: 32000 efficiency: 0.45 } }
training {
  global_batch: 8 microbatches: 2 data_parallel: 4 tensor_parallel: 8 sequence_parallel: true
  precision: BF16 mixed_precision: true grad_bucket_mb: 0
}
schedule { kind: ONE_F_ONE_B stages: 1 }
)";

// Oversubscribed pods, or (oversubscription 1) a full-bisection tree.
double step_seconds(const std::string& oversubscription, Engine engine, bool exact = false,
                    const std::string& collectives = "NCCL") {
  LoadedScenario loaded = parse_scenario(kPods, "pods", ".", false,
                                         {"cluster.inter_node.oversubscription=" + oversubscription,
                                          "cluster.collectives.model=" + collectives});
  loaded.scenario.mutable_simgrid()->set_exact(exact);
  SimulationOptions options;
  options.engine = engine;
  return simulate(loaded, options).times.span_s();
}

TEST(PodFabric, TheAnalyticEngineGivesAFlowBetweenPodsItsShareOfTheUplink) {
  const ResolvedScenario setup = resolve_scenario(parse_scenario(kPods, "pods", ".", false, {}));
  EXPECT_EQ(&setup.cluster.nominal_link(0, 8), &setup.cluster.inter_node);   // nodes 0 and 1: one pod
  EXPECT_EQ(&setup.cluster.nominal_link(0, 16), &setup.cluster.inter_leaf);  // nodes 0 and 2
  EXPECT_DOUBLE_EQ(setup.cluster.inter_leaf.bandwidth_bytes_per_s,
                   setup.cluster.inter_node.bandwidth_bytes_per_s / 7);
}

// At full bisection the tree is the flat switch, in both engines.
TEST(PodFabric, AFullBisectionTreeIsTheFlatSwitch) {
  for (Engine engine : {Engine::kAnalytic, Engine::kSimgrid}) {
    LoadedScenario flat =
        parse_scenario(kPods, "pods", ".", false, {"cluster.inter_node.fabric=FLAT_SWITCH"});
    SimulationOptions options;
    options.engine = engine;
    EXPECT_DOUBLE_EQ(step_seconds("1", engine), simulate(flat, options).times.span_s());
  }
}

TEST(PodFabric, DataParallelGroupsAcrossPodsSlowInBothEngines) {
  for (const char* collectives : {"NCCL", "TEXTBOOK"}) {
    SCOPED_TRACE(collectives);
    const double flat_analytic = step_seconds("1", Engine::kAnalytic, false, collectives);
    const double pods_analytic = step_seconds("7", Engine::kAnalytic, false, collectives);
    const double flat_simgrid = step_seconds("1", Engine::kSimgrid, false, collectives);
    const double pods_simgrid = step_seconds("7", Engine::kSimgrid, false, collectives);
    EXPECT_GT(pods_analytic, flat_analytic);
    EXPECT_GT(pods_simgrid, flat_simgrid);
    // The analytic engine's share is the uplink's when every NIC sends: a bound.
    EXPECT_GE(pods_analytic * (1 + 1e-9), pods_simgrid);
    // Dedicated links at the analytic engine's bandwidths: the same times.
    EXPECT_NEAR(step_seconds("7", Engine::kSimgrid, true, collectives), pods_analytic,
                1e-9 * pods_analytic);
  }
}

}  // namespace
}  // namespace pipetwin
