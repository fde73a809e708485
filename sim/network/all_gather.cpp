// Ring all-gather of a result of `bytes` (each member holds ceil(bytes / n) of it): one pass
// around the ring, every member passing on the shard it received last (ring_pass.h).
#include "sim/network/ring_pass.h"

namespace pipetwin {

const CollectiveAlgorithm& all_gather_algorithm() {
  static const RingPass algorithm("ring all-gather");
  return algorithm;
}

}  // namespace pipetwin
