// Ring all-reduce (reduce-scatter then all-gather): 2(n-1) lock-step steps, in each of
// which every member sends one chunk of ceil(bytes / n) to the next member of the ring.
// Each step takes as long as its slowest link:
//   time = 2(n-1) * max over ring links (latency + chunk / bandwidth)
// which on identical links is 2(n-1)/n * bytes/bandwidth + 2(n-1) * latency.
#pragma once

#include "sim/spec/cluster_spec.h"

namespace pipetwin {

// The closed form on `ranks` devices joined by identical links (0 for one device).
double uniform_ring_allreduce_seconds(double bytes, int ranks, const LinkSpec& link);

}  // namespace pipetwin
