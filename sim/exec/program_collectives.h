// A Program's collective groups as the network model sees them: the devices of a group,
// in member order, and the flows of its collective (sim/network/network_model.h). The
// analytic engine times them, the SimGrid engine runs them, link statistics count them.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/network/collective_algorithm.h"
#include "sim/network/collective_schedule.h"
#include "sim/program/program.h"
#include "sim/spec/cluster_spec.h"

namespace pipetwin {

// The algorithm of a collective op in every engine (sim/network/network_model.h).
Collective program_collective(Op op);

std::vector<int32_t> group_devices(const Program& program, int32_t group);

// All `collectives` collectives of the group's op, one after the other.
CollectiveSchedule group_flows(const Program& program, const ClusterSpec& cluster, int32_t group);

// The group's time without contention (collective_seconds).
double group_seconds(const Program& program, const ClusterSpec& cluster, int32_t group);

}  // namespace pipetwin
