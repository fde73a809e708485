#include "sim/network/two_level_allreduce.h"

#include <stdexcept>
#include <string>
#include <vector>

#include "sim/network/collective_algorithm.h"
#include "sim/network/ring_allreduce.h"

namespace pipetwin {

double two_level_allreduce_seconds(double bytes, int per_node, int nodes, const LinkSpec& intra,
                                   const LinkSpec& inter) {
  return uniform_ring_allreduce_seconds(bytes, per_node, intra) +
         uniform_ring_allreduce_seconds(bytes / per_node, nodes, inter);
}

namespace {

// The group's devices per node, nodes in order of first appearance, devices in group order.
std::vector<std::vector<int32_t>> members_by_node(const ClusterSpec& cluster,
                                                  std::span<const int32_t> group) {
  std::vector<std::vector<int32_t>> nodes;
  std::vector<int32_t> node_ids;
  for (int32_t device : group) {
    const int32_t node = cluster.devices[device].node;
    size_t k = 0;
    while (k < node_ids.size() && node_ids[k] != node) ++k;
    if (k == node_ids.size()) {
      node_ids.push_back(node);
      nodes.emplace_back();
    }
    nodes[k].push_back(device);
  }
  for (const auto& members : nodes) {
    if (members.size() != nodes.front().size()) {
      throw std::invalid_argument("two-level all-reduce: the group's nodes hold " +
                                  std::to_string(nodes.front().size()) + " and " +
                                  std::to_string(members.size()) + " of its devices");
    }
  }
  return nodes;
}

class TwoLevelAllReduce final : public CollectiveAlgorithm {
 public:
  std::string_view name() const override { return "two-level all-reduce"; }
  double uniform_seconds(double bytes, int32_t ranks, const LinkSpec& link) const override {
    return two_level_allreduce_seconds(bytes, ranks, 1, link, link);
  }
  CollectiveSchedule schedule(const ClusterSpec& cluster, std::span<const int32_t> group,
                              int64_t bytes) const override {
    const std::vector<std::vector<int32_t>> nodes = members_by_node(cluster, group);
    if (nodes.empty()) return {};
    const int32_t p = static_cast<int32_t>(nodes.front().size());
    const int32_t n = static_cast<int32_t>(nodes.size());
    const int64_t shard = ceil_div(bytes, p);
    CollectiveSchedule phases;
    FlowPhase inside;  // the reduce-scatter and, with the same flows, the all-gather
    for (const auto& members : nodes) {
      for (const PointFlow& flow : ring_phase(members, shard, p - 1).flows) {
        inside.flows.push_back(flow);
      }
    }
    inside.repeats = p - 1;
    if (p > 1) phases.push_back(inside);
    if (n > 1) {
      FlowPhase across;
      across.repeats = 2 * (n - 1);
      for (int32_t local = 0; local < p; ++local) {
        std::vector<int32_t> ring;
        for (const auto& members : nodes) ring.push_back(members[local]);
        for (const PointFlow& flow : ring_phase(ring, ceil_div(shard, n), 1).flows) {
          across.flows.push_back(flow);
        }
      }
      phases.push_back(std::move(across));
    }
    if (p > 1) phases.push_back(std::move(inside));
    return phases;
  }
};

}  // namespace

const CollectiveAlgorithm& two_level_allreduce_algorithm() {
  static const TwoLevelAllReduce algorithm;
  return algorithm;
}

}  // namespace pipetwin
