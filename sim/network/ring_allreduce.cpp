#include "sim/network/ring_allreduce.h"

#include "sim/network/collective_algorithm.h"

namespace pipetwin {

double uniform_ring_allreduce_seconds(double bytes, int ranks, const LinkSpec& link) {
  if (ranks <= 1) return 0;
  const double steps = 2.0 * (ranks - 1);
  return steps / ranks * bytes / link.bandwidth_bytes_per_s + steps * link.latency_s;
}

namespace {

class RingAllReduce final : public CollectiveAlgorithm {
 public:
  std::string_view name() const override { return "ring all-reduce"; }
  double uniform_seconds(double bytes, int32_t ranks, const LinkSpec& link) const override {
    return uniform_ring_allreduce_seconds(bytes, ranks, link);
  }
  CollectiveSchedule schedule(const ClusterSpec&, std::span<const int32_t> group,
                              int64_t bytes) const override {
    const int32_t n = static_cast<int32_t>(group.size());
    if (n < 2) return {};
    return {ring_phase(group, ceil_div(bytes, n), 2 * (n - 1))};
  }
};

}  // namespace

const CollectiveAlgorithm& ring_allreduce_algorithm() {
  static const RingAllReduce algorithm;
  return algorithm;
}

}  // namespace pipetwin
