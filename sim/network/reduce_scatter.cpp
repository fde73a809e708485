// Ring reduce-scatter: one pass around the ring, every member sending the partial sum of one
// shard to the next (ring_pass.h).
#include "sim/network/ring_pass.h"

namespace pipetwin {

const CollectiveAlgorithm& reduce_scatter_algorithm() {
  static const RingPass algorithm("ring reduce-scatter");
  return algorithm;
}

}  // namespace pipetwin
