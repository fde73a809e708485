// Binomial-tree broadcast of `bytes` from group[0] (binomial_tree.h): ceil(log2 n) rounds,
// in each of which every member that has the message sends all of it to one that has not.
//   time = sum over rounds of max over the round's flows (latency + bytes / bandwidth)
// which on identical links is ceil(log2 n) * (latency + bytes/bandwidth).
#include "sim/network/binomial_tree.h"
#include "sim/network/collective_algorithm.h"

namespace pipetwin {
namespace {

class BinomialBroadcast final : public CollectiveAlgorithm {
 public:
  std::string_view name() const override { return "binomial broadcast"; }
  double uniform_seconds(double bytes, int32_t ranks, const LinkSpec& link) const override {
    return binomial_rounds(ranks) * (link.latency_s + bytes / link.bandwidth_bytes_per_s);
  }
  CollectiveSchedule schedule(const ClusterSpec&, std::span<const int32_t> group,
                              int64_t bytes) const override {
    return binomial_broadcast_phases(group, bytes);
  }
};

}  // namespace

const CollectiveAlgorithm& broadcast_algorithm() {
  static const BinomialBroadcast algorithm;
  return algorithm;
}

}  // namespace pipetwin
