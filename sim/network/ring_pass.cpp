#include "sim/network/ring_pass.h"

#include "sim/network/collective_schedule.h"

namespace pipetwin {

double RingPass::uniform_seconds(double bytes, int32_t ranks, const LinkSpec& link) const {
  if (ranks <= 1) return 0;
  const double steps = ranks - 1.0;
  return steps / ranks * bytes / link.bandwidth_bytes_per_s + steps * link.latency_s;
}

CollectiveSchedule RingPass::schedule(const ClusterSpec&, std::span<const int32_t> group,
                                      int64_t bytes) const {
  const int32_t n = static_cast<int32_t>(group.size());
  if (n < 2) return {};
  return {ring_phase(group, ceil_div(bytes, n), n - 1)};
}

}  // namespace pipetwin
