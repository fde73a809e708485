#include "sim/network/binomial_tree.h"

#include <algorithm>

namespace pipetwin {

CollectiveSchedule binomial_broadcast_phases(std::span<const int32_t> group, int64_t bytes) {
  const int32_t n = static_cast<int32_t>(group.size());
  CollectiveSchedule phases;
  for (int32_t j = binomial_rounds(n) - 1; j >= 0; --j) {
    const int32_t half = 1 << j;
    FlowPhase phase;
    for (int32_t r = 0; r + half < n; r += 2 * half) {
      phase.flows.push_back({group[r], group[r + half], bytes});
    }
    phases.push_back(std::move(phase));
  }
  return phases;
}

CollectiveSchedule binomial_reduce_phases(std::span<const int32_t> group, int64_t bytes) {
  CollectiveSchedule phases = binomial_broadcast_phases(group, bytes);
  std::reverse(phases.begin(), phases.end());
  for (FlowPhase& phase : phases) {
    for (PointFlow& flow : phase.flows) std::swap(flow.from, flow.to);
  }
  return phases;
}

}  // namespace pipetwin
