#include "sim/network/network_model.h"

#include <optional>

#include "sim/network/nccl_collective.h"

namespace pipetwin {

namespace {

// The collectives NCCL runs and its tuning model prices (cluster.collectives.model NCCL).
std::optional<NcclCollective> nccl_priced(const ClusterSpec& cluster, Collective kind) {
  if (cluster.collectives.model != CollectivesSpec::Model::kNccl) return std::nullopt;
  switch (kind) {
    case Collective::kAllReduceRing:
      return NcclCollective::kAllReduce;
    case Collective::kReduceScatter:
      return NcclCollective::kReduceScatter;
    case Collective::kAllGather:
      return NcclCollective::kAllGather;
    default:
      return std::nullopt;
  }
}

}  // namespace

CollectiveSchedule collective_flows(const ClusterSpec& cluster, Collective kind,
                                    std::span<const int32_t> group, int64_t bytes, int32_t count) {
  if (const std::optional<NcclCollective> nccl = nccl_priced(cluster, kind)) {
    CollectiveSchedule schedule = nccl_schedule(cluster, *nccl, group, (bytes + count - 1) / count);
    repeat_phases(schedule, count);
    return schedule;
  }
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
