// The collectives of the network model behind one interface. Each algorithm is one file
// (ring_allreduce.cpp, ...) that gives its textbook closed form on identical links and its
// lock-step flows over a group placed on the cluster; collective_table.cpp lists them.
// docs/network.md states every formula and flow pattern.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "sim/network/collective_schedule.h"
#include "sim/spec/cluster_spec.h"

namespace pipetwin {

enum class Collective {
  kAllReduceRing,
  kAllReduceTree,      // binomial reduce, then binomial broadcast
  kAllReduceTwoLevel,  // reduce-scatter in each node, ring across nodes, all-gather in each node
  kReduceScatter,      // ring
  kAllGather,          // ring
  kAllToAll,           // pairwise exchange
  kBroadcast,          // binomial tree from group[0]
};

class CollectiveAlgorithm {
 public:
  virtual ~CollectiveAlgorithm() = default;
  virtual std::string_view name() const = 0;

  // The textbook time of one collective over `ranks` devices joined by identical links.
  // `bytes` is each member's buffer: the all-reduced or scattered one, the gathered result
  // of an all-gather, the whole send buffer of an all-to-all, the broadcast message.
  virtual double uniform_seconds(double bytes, int32_t ranks, const LinkSpec& link) const = 0;

  // The lock-step flows of one collective of `bytes` over `group` (devices, in ring order;
  // group[0] is the root of a tree). Throws std::invalid_argument for a group the
  // algorithm cannot serve.
  virtual CollectiveSchedule schedule(const ClusterSpec& cluster, std::span<const int32_t> group,
                                      int64_t bytes) const = 0;
};

const CollectiveAlgorithm& collective_algorithm(Collective kind);

// The algorithms collective_table.cpp knows, one per file.
const CollectiveAlgorithm& ring_allreduce_algorithm();
const CollectiveAlgorithm& tree_allreduce_algorithm();
const CollectiveAlgorithm& two_level_allreduce_algorithm();
const CollectiveAlgorithm& reduce_scatter_algorithm();
const CollectiveAlgorithm& all_gather_algorithm();
const CollectiveAlgorithm& all_to_all_algorithm();
const CollectiveAlgorithm& broadcast_algorithm();

}  // namespace pipetwin
