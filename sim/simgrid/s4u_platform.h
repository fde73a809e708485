// Adapter (WRENCH-style): instantiates a Topology as a SimGrid platform. Only files in
// sim/simgrid/ include SimGrid headers.
#pragma once

#include <simgrid/s4u.hpp>
#include <utility>
#include <vector>

#include "sim/cluster/topology.h"
#include "sim/spec/cluster_spec.h"

namespace pipetwin {

// Creates one host per device (at its peak FLOP/s) and one per node's CPU, the
// topology's links, and a route for each (from, to) endpoint pair in `routes`.
// Must run after the Engine is created and before it runs.
std::vector<simgrid::s4u::Host*> build_s4u_platform(
    const Topology& topology, const ClusterSpec& cluster,
    const std::vector<std::pair<int32_t, int32_t>>& routes);

// Loads cluster.simgrid_platform (a SimGrid XML file) and returns the host of each device,
// from cluster.platform_hosts or the platform's hosts in name order. Throws InputError
// for a host that is not there or too few hosts.
std::vector<simgrid::s4u::Host*> load_s4u_platform(simgrid::s4u::Engine& engine,
                                                   const ClusterSpec& cluster);

}  // namespace pipetwin
