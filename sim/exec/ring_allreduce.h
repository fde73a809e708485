// Cost of a ring all-reduce (reduce-scatter then all-gather): 2(D-1) steps, in each of
// which every member sends one chunk of ceil(bytes / D) to the next member of the ring.
// Steps are lock-step, so each takes as long as its slowest link:
//   time = 2(D-1) * max over ring links (latency + chunk / bandwidth)
// which for a uniform ring is the closed form 2(D-1)/D * bytes/bw + 2(D-1) * latency.
#pragma once

#include <cstdint>
#include <span>

#include "sim/spec/cluster_spec.h"

namespace pipetwin {

inline int64_t ring_chunk_bytes(int64_t bytes, int32_t members) {
  return (bytes + members - 1) / members;
}

// `devices` in ring order. `collectives` all-reduces of bytes / collectives each, one
// after the other (each pays its 2(D-1) latencies).
double ring_allreduce_seconds(const ClusterSpec& cluster, std::span<const int32_t> devices,
                              int64_t bytes, int32_t collectives = 1);

}  // namespace pipetwin
