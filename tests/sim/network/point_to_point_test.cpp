// One message on one link: latency + bytes / bandwidth, over the link the cluster puts
// between two devices (intra-node on one node, inter-node across) or to the host.
#include "sim/network/point_to_point.h"

#include <gtest/gtest.h>

#include "two_node_cluster.h"

namespace pipetwin {
namespace {

using testing::kInfiniBand;
using testing::kNvLink;

TEST(PointToPoint, IsLatencyPlusBytesOverBandwidth) {
  EXPECT_DOUBLE_EQ(transfer_seconds({1e9, 5e-6}, 2e6), 5e-6 + 2e-3);
  EXPECT_DOUBLE_EQ(transfer_seconds({0, 5e-6}, 2e6), 5e-6);  // no bandwidth given: latency
}

TEST(PointToPoint, DevicesUseTheLinkOfTheirNodesAndCopiesTheHostLink) {
  const ClusterSpec cluster = testing::plain_cluster(2, 2, kNvLink, kInfiniBand);
  const double bytes = 1e8;
  EXPECT_DOUBLE_EQ(device_transfer_seconds(cluster, 0, 1, bytes),
                   kNvLink.latency_s + bytes / kNvLink.bandwidth_bytes_per_s);
  EXPECT_DOUBLE_EQ(device_transfer_seconds(cluster, 1, 2, bytes),
                   kInfiniBand.latency_s + bytes / kInfiniBand.bandwidth_bytes_per_s);
  EXPECT_DOUBLE_EQ(host_copy_seconds(cluster, bytes), 2e-6 + bytes / 25e9);
}

TEST(PointToPoint, StripedOverSendersDividesOnlyTheBandwidthTerm) {
  EXPECT_DOUBLE_EQ(striped_transfer_seconds(4e9, 4, kInfiniBand),
                   kInfiniBand.latency_s + 1e9 / kInfiniBand.bandwidth_bytes_per_s);
}

}  // namespace
}  // namespace pipetwin
