#include <stdexcept>

#include "sim/network/collective_algorithm.h"

namespace pipetwin {

const CollectiveAlgorithm& collective_algorithm(Collective kind) {
  switch (kind) {
    case Collective::kAllReduceRing:
      return ring_allreduce_algorithm();
    case Collective::kAllReduceTree:
      return tree_allreduce_algorithm();
    case Collective::kAllReduceTwoLevel:
      return two_level_allreduce_algorithm();
    case Collective::kReduceScatter:
      return reduce_scatter_algorithm();
    case Collective::kAllGather:
      return all_gather_algorithm();
    case Collective::kAllToAll:
      return all_to_all_algorithm();
    case Collective::kBroadcast:
      return broadcast_algorithm();
  }
  throw std::invalid_argument("unknown collective");
}

}  // namespace pipetwin
