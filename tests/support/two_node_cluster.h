// A plain cluster for tests of communication: `nodes` nodes of `per_node` devices, one
// link type inside a node and one between nodes, a host link per node.
#pragma once

#include <string>

#include "sim/spec/cluster_spec.h"

namespace pipetwin::testing {

inline ClusterSpec plain_cluster(int nodes, int per_node, LinkSpec intra, LinkSpec inter) {
  ClusterSpec cluster;
  cluster.nodes = nodes;
  cluster.gpus_per_node = per_node;
  for (int d = 0; d < nodes * per_node; ++d) {
    cluster.devices.push_back({d, d / per_node, "gpu" + std::to_string(d), 1e15, 80e9});
  }
  cluster.intra_node = intra;
  cluster.inter_node = inter;
  cluster.host_link = {25e9, 2e-6};
  cluster.has_host_link = true;
  return cluster;
}

inline const LinkSpec kNvLink = {300e9, 2e-6};
inline const LinkSpec kInfiniBand = {25e9, 6e-6};

}  // namespace pipetwin::testing
