// One collective's flows (sim/network/) run by the SimGrid engine on the cluster, without
// a Program: how long does it take on this fabric, or, in exact mode (dedicated links),
// does SimGrid agree with the network model's closed form? Every member runs its part as
// the engine runs a Program's collective (collective_member.h).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/network/collective_schedule.h"
#include "sim/spec/cluster_spec.h"
#include "sim/spec/resolved_scenario.h"

namespace pipetwin {

// Seconds from the members' common start to the end of the last phase, simulated in a
// child process on the cluster's fabric (dedicated pairs in exact mode).
double simulate_collective(const ClusterSpec& cluster, const std::vector<int32_t>& group,
                           const CollectiveSchedule& schedule,
                           const SimgridSettings& settings = {});

}  // namespace pipetwin
