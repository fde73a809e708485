// Point-to-point time: one message over one link, the alpha-beta model every engine and
// search uses (latency + bytes / bandwidth). Which link joins two devices is the cluster's
// (ClusterSpec::link); a device's offload copies go over its node's host link.
#pragma once

#include <cstdint>

#include "sim/spec/cluster_spec.h"

namespace pipetwin {

// latency + bytes / bandwidth; a link of no bandwidth costs its latency only.
inline double transfer_seconds(const LinkSpec& link, double bytes) {
  return link.latency_s + (link.bandwidth_bytes_per_s > 0 ? bytes / link.bandwidth_bytes_per_s : 0);
}

// From device `from` to device `to`.
inline double device_transfer_seconds(const ClusterSpec& cluster, int32_t from, int32_t to,
                                      double bytes) {
  return transfer_seconds(cluster.link(from, to), bytes);
}

// Between a device and its node's host memory (OFFLOAD and RELOAD), either way.
inline double host_copy_seconds(const ClusterSpec& cluster, double bytes) {
  return transfer_seconds(cluster.host_link, bytes);
}

// `bytes` striped over `senders` parallel streams on identical links (the planners' cut
// between replicated stages): latency + bytes / (bandwidth * senders).
inline double striped_transfer_seconds(double bytes, int senders, const LinkSpec& link) {
  return link.latency_s + bytes / (link.bandwidth_bytes_per_s * senders);
}

}  // namespace pipetwin
