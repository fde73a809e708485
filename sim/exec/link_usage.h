// What the network carried: per link of the topology, bytes, busy time, and a
// utilisation curve, from an executed Program. Every SEND crosses the links of its route;
// an ALLREDUCE's flows (sim/exec/program_collectives.h) cross theirs during the span of
// the member that sends them.
// Utilisation at time t is the sum of the average rates (bytes / duration) of the flows
// on the link at t, divided by its bandwidth: above 1 means the analytic executor, which
// does not model sharing, let flows overlap that the link could not carry together.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/cluster/topology.h"
#include "sim/exec/execution_times.h"
#include "sim/program/program.h"
#include "sim/spec/cluster_spec.h"

namespace pipetwin {

// Per link and direction: a split-duplex link's two directions are separate resources.
struct LinkUsage {
  int32_t link = 0;  // index in Topology::links()
  bool up = true;    // the direction, on a split-duplex link
  std::string name;  // the link's name, with "/up" or "/down" on a split-duplex link
  double bandwidth_bytes_per_s = 0;
  double bytes = 0;
  double busy_s = 0;  // time at least one flow was on the link
  // (time, utilisation) from which on the value holds.
  std::vector<std::pair<double, double>> utilization;
};

// Only links that carried something, in topology order (down before up).
std::vector<LinkUsage> link_usage(const Program& program, const ClusterSpec& cluster,
                                  const Topology& topology, const ExecutionTimes& times);

}  // namespace pipetwin
