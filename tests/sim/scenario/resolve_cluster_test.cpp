// The cluster section alone: devices numbered node by node, per-device overrides, links in
// SI units, and errors that name the line and the field.
#include "sim/scenario/resolve_cluster.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

using ::testing::ThrowsMessage;

ClusterSpec resolve(const std::string& text) {
  const LoadedScenario loaded = parse_scenario(text, "c.textproto", ".", false, {});
  return resolve_cluster(ScenarioChecker(loaded), loaded);
}

const char* kTwoNodes = R"(cluster {
  nodes: 2
  gpus_per_node: 2
  gpu { peak_tflops: 100 memory_gib: 40 }
  intra_node { bandwidth_gbytes_per_s: 300 latency_us: 2 }
  inter_node { bandwidth_gbytes_per_s: 25 latency_us: 5 nics_per_node: 1 }
  devices { id: 3 gpu { memory_gib: 80 } }
}
)";

TEST(ResolveCluster, DevicesNumberedNodeByNodeWithOverrides) {
  const ClusterSpec c = resolve(kTwoNodes);
  ASSERT_EQ(c.devices.size(), 4u);
  for (int id = 0; id < 4; ++id) {
    EXPECT_EQ(c.devices[id].id, id);
    EXPECT_EQ(c.devices[id].node, id / 2);
    EXPECT_EQ(c.devices[id].name, "gpu" + std::to_string(id));
    EXPECT_DOUBLE_EQ(c.devices[id].peak_flops, 100e12);
  }
  EXPECT_DOUBLE_EQ(c.devices[2].memory_bytes, 40.0 * (1 << 30));
  EXPECT_DOUBLE_EQ(c.devices[3].memory_bytes, 80.0 * (1 << 30));
  EXPECT_DOUBLE_EQ(c.intra_node.bandwidth_bytes_per_s, 300e9);
  EXPECT_DOUBLE_EQ(c.inter_node.latency_s, 5e-6);
  EXPECT_FALSE(c.has_host_link);
  EXPECT_DOUBLE_EQ(c.host_memory_bytes, 512.0 * (1 << 30));  // the default host
}

TEST(ResolveCluster, ErrorsNameTheLineAndTheField) {
  std::string more_nics = kTwoNodes;
  more_nics.replace(more_nics.find("nics_per_node: 1"), 16, "nics_per_node: 3");
  EXPECT_THAT([&] { resolve(more_nics); },
              ThrowsMessage<InputError>(
                  "c.textproto:6: cluster.inter_node.nics_per_node: more NICs than GPUs per node"));
  std::string bad_device = kTwoNodes;
  bad_device.replace(bad_device.find("id: 3"), 5, "id: 4");
  EXPECT_THAT([&] { resolve(bad_device); },
              ThrowsMessage<InputError>(
                  "c.textproto:7: cluster.devices[0].id: no device 4 in a cluster of 4"));
  EXPECT_THAT(
      [&] {
        resolve(
            "cluster { nodes: 2 gpus_per_node: 1 gpu { peak_tflops: 1 "
            "memory_gib: 1 } intra_node { bandwidth_gbytes_per_s: 1 } }");
      },
      ThrowsMessage<InputError>("c.textproto:1: cluster.inter_node: missing (required)"));
}

TEST(ResolveCluster, InterferenceIsAFractionBelowOne) {
  std::string text = kTwoNodes;
  text.insert(text.rfind('}'), "  interference { compute_slowdown: 1 }\n");
  EXPECT_THAT([&] { resolve(text); },
              ThrowsMessage<InputError>(
                  "c.textproto:8: cluster.interference.compute_slowdown: is the fraction of speed "
                  "an overlapped op loses: must be below 1 (got 1)"));
}

}  // namespace
}  // namespace pipetwin
