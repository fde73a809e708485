// NCCL's tuning model (sim/network/nccl_tuning.h) against the times and choices it gives on
// NCCL 2.30.7's tables, worked out by hand from src/graph/tuning.cc for DGX H100 communicators
// (the graphs NCCL's search finds there: docs/network.md), and the graphs pipetwin derives from
// the dgx-h100 preset's links against those.
#include "sim/network/nccl_tuning.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/network/nccl_collective.h"
#include "sim/scenario/loaded_scenario.h"
#include "sim/scenario/resolve_scenario.h"

namespace pipetwin {
namespace {

constexpr double kKiB = 1024, kMiB = kKiB * 1024, kGiB = kMiB * 1024;

NcclTopology one_node() {  // 8 H100 of one node
  NcclTopology t;
  t.ranks = 8;
  t.nodes = 1;
  t.runtime_channels = 24;
  t.ring = t.tree = {12, 30, 30, true};
  t.nvls = {8, 40, 60, true};
  return t;
}
NcclTopology nodes_of_eight(int nodes) {  // 8 H100 per node, 8 NICs of 400 Gb/s
  NcclTopology t;
  t.ranks = 8 * nodes;
  t.nodes = nodes;
  t.runtime_channels = 16;
  t.ring = t.tree = {8, 48, 48, true};
  t.nvls = {8, 40, 48, true};
  t.tree_pattern_simple = true;
  return t;
}
NcclTopology one_rail(int nodes) {  // one GPU per node
  NcclTopology t;
  t.ranks = t.nodes = nodes;
  t.runtime_channels = 4;
  t.ring = {2, 24, 24, false};
  t.tree = {2, 48, 24, false};
  t.tree_pattern_simple = true;
  t.pat = true;
  return t;
}

struct Case {
  double bytes;
  NcclAlgorithm algorithm;
  NcclProtocol protocol;
  double microseconds;
};

void expect_choices(const NcclTopology& t, NcclCollective c, const std::vector<Case>& cases,
                    double tolerance_us) {
  for (const Case& k : cases) {
    const NcclChoice choice = nccl_choose(t, c, k.bytes);
    const std::string what = std::to_string(k.bytes) + " bytes over " + std::to_string(t.ranks) +
                             " ranks on " + std::to_string(t.nodes) + " nodes";
    EXPECT_EQ(choice.algorithm, k.algorithm) << what;
    EXPECT_EQ(choice.protocol, k.protocol) << what;
    EXPECT_NEAR(choice.seconds * 1e6, k.microseconds, tolerance_us) << what;
  }
}

using A = NcclAlgorithm;
using P = NcclProtocol;

TEST(NcclTuning, AllReduceInsideOneNode) {
  expect_choices(one_node(), NcclCollective::kAllReduce,
                 {{8 * kKiB, A::kRing, P::kLL, 15.1},
                  {1 * kMiB, A::kRing, P::kLL, 28.0},
                  {64 * kMiB, A::kNvls, P::kSimple, 271.7},
                  {1 * kGiB, A::kNvls, P::kSimple, 3972.6}},
                 0.051);
  // The model's table: ring Simple 8.4 + 14 x 3.4 us at 12 x 30 x 8/14 GB/s; NVLS 25 us at
  // 8 x 40 x 0.85 x 7/8 x 2 x 8/14.
  const NcclCost ring = nccl_cost(one_node(), NcclCollective::kAllReduce, A::kRing, P::kSimple);
  EXPECT_DOUBLE_EQ(ring.latency_us, 8.4 + 14 * 3.4);
  EXPECT_DOUBLE_EQ(ring.bandwidth_gbytes_per_s, 360.0 * 8 / 14);
  const NcclCost nvls = nccl_cost(one_node(), NcclCollective::kAllReduce, A::kNvls, P::kSimple);
  EXPECT_DOUBLE_EQ(nvls.latency_us, 25);
  EXPECT_DOUBLE_EQ(nvls.bandwidth_gbytes_per_s, 8 * 40 * 0.85 * 7 / 8 * 2 * 8.0 / 14);
}

TEST(NcclTuning, AllReduceAcrossNodes) {
  expect_choices(nodes_of_eight(16), NcclCollective::kAllReduce,
                 {{8 * kKiB, A::kTree, P::kLL, 56.5},
                  {1 * kMiB, A::kTree, P::kLL128, 117.2},
                  {64 * kMiB, A::kNvlsTree, P::kSimple, 558.0},
                  {1 * kGiB, A::kNvlsTree, P::kSimple, 6045.8}},
                 0.051);
  expect_choices(nodes_of_eight(128), NcclCollective::kAllReduce,
                 {{8 * kKiB, A::kTree, P::kLL, 86.5},
                  {1 * kMiB, A::kTree, P::kLL128, 168.2},
                  {64 * kMiB, A::kNvlsTree, P::kSimple, 686.0},
                  {1 * kGiB, A::kNvlsTree, P::kSimple, 6211.5}},
                 0.051);
}

// One GPU per node, as a data-parallel group under tensor parallelism: trees until the ring's
// 2(n-1) latencies are paid back, at a gigabyte.
TEST(NcclTuning, AllReduceOverOneRail) {
  expect_choices(one_rail(128), NcclCollective::kAllReduce,
                 {{8 * kKiB, A::kTree, P::kLL, 79.2},
                  {1 * kMiB, A::kTree, P::kLL128, 232.3},
                  {64 * kMiB, A::kTree, P::kLL128, 4370.9},
                  {1 * kGiB, A::kRing, P::kSimple, 49379.9}},
                 0.051);
}

TEST(NcclTuning, AllGather) {
  expect_choices(one_node(), NcclCollective::kAllGather,
                 {{8 * kKiB, A::kRing, P::kLL, 10.9},
                  {1 * kMiB, A::kRing, P::kLL, 17.3},
                  {64 * kMiB, A::kRing, P::kSimple, 195.3},
                  {1 * kGiB, A::kRing, P::kSimple, 2642}},
                 0.51);
  expect_choices(one_rail(128), NcclCollective::kAllGather,
                 {{8 * kKiB, A::kPat, P::kSimple, 394.6},
                  {1 * kMiB, A::kPat, P::kSimple, 423.5},
                  {64 * kMiB, A::kPat, P::kSimple, 2258.5},
                  {1 * kGiB, A::kRing, P::kSimple, 23981}},
                 0.51);
}

TEST(NcclTuning, APinnedAlgorithmKeepsNcclsProtocolChoice) {
  const NcclChoice ring =
      nccl_choose(one_rail(128), NcclCollective::kAllReduce, 8 * kKiB, NcclAlgorithm::kRing);
  EXPECT_EQ(ring.algorithm, A::kRing);
  EXPECT_EQ(ring.protocol, P::kLL);
  // NVLS spans one node: pinned across nodes, NCCL's own choice serves the call.
  EXPECT_EQ(nccl_choose(nodes_of_eight(2), NcclCollective::kAllReduce, kMiB, A::kNvls).algorithm,
            A::kTree);
}

// The graphs pipetwin derives from the dgx-h100 preset are those NCCL's search finds on a
// DGX H100.
TEST(NcclTuning, TheDgxH100GraphsFromThePresetsLinks) {
  const ResolvedScenario setup =
      resolve_scenario(load_scenario("builtin:gpt-8gpu-1f1b", {"cluster.nodes=16"}));
  ASSERT_EQ(setup.cluster.collectives.model, CollectivesSpec::Model::kNccl);
  std::vector<int32_t> node(8), all(128), rail;
  for (int32_t d = 0; d < 128; ++d) all[d] = d;
  for (int32_t d = 0; d < 8; ++d) node[d] = d;
  for (int32_t n = 0; n < 16; ++n) rail.push_back(8 * n + 3);
  const auto same = [](const NcclGraph& a, const NcclGraph& b) {
    return a.channels == b.channels && a.bw_intra == b.bw_intra && a.bw_inter == b.bw_inter;
  };
  const NcclTopology a = nccl_topology(setup.cluster, node);
  EXPECT_TRUE(same(a.ring, one_node().ring));
  EXPECT_EQ(a.nvls.channels, 8);
  EXPECT_EQ(a.nvls.bw_intra, 40);
  EXPECT_EQ(a.runtime_channels, 24);
  const NcclTopology b = nccl_topology(setup.cluster, all);
  EXPECT_EQ(b.nodes, 16);
  EXPECT_TRUE(same(b.ring, nodes_of_eight(16).ring));
  EXPECT_TRUE(same(b.nvls, nodes_of_eight(16).nvls));
  EXPECT_EQ(b.runtime_channels, 16);
  const NcclTopology c = nccl_topology(setup.cluster, rail);
  EXPECT_TRUE(same(c.ring, one_rail(16).ring));
  EXPECT_TRUE(same(c.tree, one_rail(16).tree));
  EXPECT_EQ(c.nvls.channels, 0);
  EXPECT_TRUE(c.pat);
  for (double bytes : {8 * kKiB, kMiB, 64 * kMiB, kGiB}) {
    EXPECT_EQ(nccl_choose(b, NcclCollective::kAllReduce, bytes).seconds,
              nccl_choose(nodes_of_eight(16), NcclCollective::kAllReduce, bytes).seconds);
  }
}

}  // namespace
}  // namespace pipetwin
