// What every part of pipetwin asks the network: the time of a message between two
// devices or a device and its host (point_to_point.h), and the time and flows of a
// collective over a group of devices placed on the cluster. The analytic engine, program
// building, the planners, UMPIPE's evaluator and calibration take times from here; the
// SimGrid engine takes the flows and lets them contend.
#pragma once

#include <cstdint>
#include <span>

#include "sim/network/collective_algorithm.h"
#include "sim/network/collective_schedule.h"
#include "sim/network/point_to_point.h"
#include "sim/spec/cluster_spec.h"

namespace pipetwin {

// The algorithm of a Program's ALLREDUCE in every engine.
inline constexpr Collective kProgramAllReduce = Collective::kAllReduceRing;
// And of its ALL_TO_ALL (expert parallelism).
inline constexpr Collective kProgramAllToAll = Collective::kAllToAll;
// And of its REDUCE_SCATTER and ALL_GATHER (ZeRO): rings, whose bytes together equal a ring
// all-reduce's.
inline constexpr Collective kProgramReduceScatter = Collective::kReduceScatter;
inline constexpr Collective kProgramAllGather = Collective::kAllGather;

// `count` collectives of ceil(bytes / count) each over `group`, one after the other (a
// tensor-parallel op holds several): the lock-step flows.
CollectiveSchedule collective_flows(const ClusterSpec& cluster, Collective kind,
                                    std::span<const int32_t> group, int64_t bytes,
                                    int32_t count = 1);

// Their time without contention: per step, the slowest link of the group decides
// (lock_step_seconds); on identical links this is the algorithm's uniform_seconds.
double collective_seconds(const ClusterSpec& cluster, Collective kind,
                          std::span<const int32_t> group, int64_t bytes, int32_t count = 1);

}  // namespace pipetwin
