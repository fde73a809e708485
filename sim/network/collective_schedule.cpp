#include "sim/network/collective_schedule.h"

#include <algorithm>

#include "sim/network/point_to_point.h"

namespace pipetwin {

double lock_step_seconds(const ClusterSpec& cluster, const CollectiveSchedule& schedule) {
  double seconds = 0;
  for (const FlowPhase& phase : schedule) {
    double step = 0;
    for (const PointFlow& flow : phase.flows) {
      step = std::max(step, device_transfer_seconds(cluster, flow.from, flow.to,
                                                    static_cast<double>(flow.bytes)));
    }
    seconds += static_cast<double>(phase.repeats) * (step + phase.overhead_s);
  }
  return seconds;
}

int32_t binomial_rounds(int32_t ranks) {
  int32_t rounds = 0;
  while ((int64_t{1} << rounds) < ranks) ++rounds;
  return rounds;
}

FlowPhase ring_phase(std::span<const int32_t> ring, int64_t chunk, int32_t repeats) {
  FlowPhase phase;
  phase.repeats = repeats;
  const size_t n = ring.size();
  if (n < 2) return phase;
  for (size_t k = 0; k < n; ++k) phase.flows.push_back({ring[k], ring[(k + 1) % n], chunk});
  return phase;
}

void repeat_phases(CollectiveSchedule& schedule, int32_t count) {
  for (FlowPhase& phase : schedule) phase.repeats *= count;
}

}  // namespace pipetwin
