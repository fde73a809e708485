// Two-level all-reduce of a group spread evenly over nodes (p devices in each of N nodes):
// a ring reduce-scatter inside every node (p-1 steps of chunks ceil(bytes / p)), then for
// each local rank a ring all-reduce of its shard across the nodes (2(N-1) steps of chunks
// ceil(shard / N)), all N-node rings at once, then a ring all-gather inside every node.
//   time = 2(p-1) * max intra-node link (latency + chunk / bandwidth)
//        + 2(N-1) * max inter-node link (latency + shard chunk / bandwidth)
// which on identical links is the intra-node ring all-reduce of `bytes` plus the
// inter-node ring all-reduce of bytes / p:
//   2(p-1)/p * bytes/bw_intra + 2(p-1) lat_intra + 2(N-1)/N * bytes/(p bw_inter) + 2(N-1) lat_inter
#pragma once

#include "sim/spec/cluster_spec.h"

namespace pipetwin {

double two_level_allreduce_seconds(double bytes, int per_node, int nodes, const LinkSpec& intra,
                                   const LinkSpec& inter);

}  // namespace pipetwin
