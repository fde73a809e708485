// Pairwise-exchange all-to-all: each member's send buffer of `bytes` holds one block of
// ceil(bytes / n) per member. In step s = 1 .. n-1 member k sends its block for member
// k+s (mod n) there, so every step is a permutation and every block moves once.
//   time = sum over steps of max over the step's flows (latency + block / bandwidth)
// which on identical links is (n-1)/n * bytes/bandwidth + (n-1) * latency.
#include "sim/network/collective_algorithm.h"

namespace pipetwin {
namespace {

class PairwiseAllToAll final : public CollectiveAlgorithm {
 public:
  std::string_view name() const override { return "pairwise all-to-all"; }
  double uniform_seconds(double bytes, int32_t ranks, const LinkSpec& link) const override {
    if (ranks <= 1) return 0;
    const double steps = ranks - 1.0;
    return steps / ranks * bytes / link.bandwidth_bytes_per_s + steps * link.latency_s;
  }
  CollectiveSchedule schedule(const ClusterSpec&, std::span<const int32_t> group,
                              int64_t bytes) const override {
    const int32_t n = static_cast<int32_t>(group.size());
    CollectiveSchedule phases;
    for (int32_t s = 1; s < n; ++s) {
      FlowPhase phase;
      for (int32_t k = 0; k < n; ++k) {
        phase.flows.push_back({group[k], group[(k + s) % n], ceil_div(bytes, n)});
      }
      phases.push_back(std::move(phase));
    }
    return phases;
  }
};

}  // namespace

const CollectiveAlgorithm& all_to_all_algorithm() {
  static const PairwiseAllToAll algorithm;
  return algorithm;
}

}  // namespace pipetwin
