// Ring reduce-scatter: n-1 lock-step steps, in each of which every member sends one chunk
// of ceil(bytes / n) (the partial sum of one shard) to the next member of the ring.
//   time = (n-1) * max over ring links (latency + chunk / bandwidth)
// which on identical links is (n-1)/n * bytes/bandwidth + (n-1) * latency.
#include "sim/network/collective_algorithm.h"

namespace pipetwin {
namespace {

class RingReduceScatter final : public CollectiveAlgorithm {
 public:
  std::string_view name() const override { return "ring reduce-scatter"; }
  double uniform_seconds(double bytes, int32_t ranks, const LinkSpec& link) const override {
    if (ranks <= 1) return 0;
    const double steps = ranks - 1.0;
    return steps / ranks * bytes / link.bandwidth_bytes_per_s + steps * link.latency_s;
  }
  CollectiveSchedule schedule(const ClusterSpec&, std::span<const int32_t> group,
                              int64_t bytes) const override {
    const int32_t n = static_cast<int32_t>(group.size());
    if (n < 2) return {};
    return {ring_phase(group, ceil_div(bytes, n), n - 1)};
  }
};

}  // namespace

const CollectiveAlgorithm& reduce_scatter_algorithm() {
  static const RingReduceScatter algorithm;
  return algorithm;
}

}  // namespace pipetwin
