// Tree all-reduce on a binomial tree rooted at group[0] (binomial_tree.h): the whole buffer
// is summed up the tree in ceil(log2 n) rounds, then broadcast down it in as many.
//   time = sum over the 2 ceil(log2 n) rounds of max over their flows
//          (latency + bytes / bandwidth)
// which on identical links is 2 ceil(log2 n) * (latency + bytes/bandwidth): fewer latencies
// than a ring's 2(n-1), but every round carries the whole buffer.
#include "sim/network/binomial_tree.h"
#include "sim/network/collective_algorithm.h"

namespace pipetwin {
namespace {

class BinomialTreeAllReduce final : public CollectiveAlgorithm {
 public:
  std::string_view name() const override { return "binomial tree all-reduce"; }
  double uniform_seconds(double bytes, int32_t ranks, const LinkSpec& link) const override {
    return 2 * binomial_rounds(ranks) * (link.latency_s + bytes / link.bandwidth_bytes_per_s);
  }
  CollectiveSchedule schedule(const ClusterSpec&, std::span<const int32_t> group,
                              int64_t bytes) const override {
    CollectiveSchedule phases = binomial_reduce_phases(group, bytes);
    for (FlowPhase& phase : binomial_broadcast_phases(group, bytes)) {
      phases.push_back(std::move(phase));
    }
    return phases;
  }
};

}  // namespace

const CollectiveAlgorithm& tree_allreduce_algorithm() {
  static const BinomialTreeAllReduce algorithm;
  return algorithm;
}

}  // namespace pipetwin
