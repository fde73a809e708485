#include "sim/network/network_model.h"

namespace pipetwin {

CollectiveSchedule collective_flows(const ClusterSpec& cluster, Collective kind,
                                    std::span<const int32_t> group, int64_t bytes, int32_t count) {
  // ceil(ceil(bytes / count) / n) == ceil(bytes / (count n)): splitting into `count`
  // collectives first gives every algorithm the chunks of one big one.
  CollectiveSchedule schedule =
      collective_algorithm(kind).schedule(cluster, group, (bytes + count - 1) / count);
  repeat_phases(schedule, count);
  return schedule;
}

double collective_seconds(const ClusterSpec& cluster, Collective kind,
                          std::span<const int32_t> group, int64_t bytes, int32_t count) {
  return lock_step_seconds(cluster, collective_flows(cluster, kind, group, bytes, count));
}

}  // namespace pipetwin
