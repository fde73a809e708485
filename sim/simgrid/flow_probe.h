// Concurrent point-to-point flows on a cluster's fabric, without a Program: how long
// do these transfers take when they overlap? Used to check the topology against hand
// computations and to ask what a fabric gives before building a schedule on it.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/cluster/topology.h"
#include "sim/spec/cluster_spec.h"
#include "sim/spec/resolved_scenario.h"

namespace pipetwin {

struct Flow {
  int32_t from = 0;  // endpoint: a device, or Topology::host_endpoint(node)
  int32_t to = 0;
  double bytes = 0;
  double start_s = 0;
};

// Finish time of each flow, simulated by SimGrid on `topology` (in a child process).
std::vector<double> simulate_flows(const Topology& topology, const ClusterSpec& cluster,
                                   const std::vector<Flow>& flows,
                                   const SimgridSettings& settings = {});

}  // namespace pipetwin
