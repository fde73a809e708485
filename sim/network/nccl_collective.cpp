#include "sim/network/nccl_collective.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "sim/network/point_to_point.h"

namespace pipetwin {
namespace {

// NCCL's NVLink speed per link (src/graph/topo.h: SM80 20.0, SM90 20.6, SM100 40.1 GB/s) over
// the link's raw rate per direction (NVLink 3 and 4: 25 GB/s, NVLink 5: 50 GB/s): what NCCL
// counts of the intra_node bandwidth.
double nccl_nvlink_fraction(GpuGeneration g) {
  switch (g) {
    case GpuGeneration::kBlackwell:
      return 40.1 / 50;
    case GpuGeneration::kHopper:
      return 20.6 / 25;
    default:
      return 20.0 / 25;
  }
}

// The speeds the topology search tries, fastest first (src/graph/search.cc).
std::vector<double> intra_speeds(GpuGeneration g) {
  if (g == GpuGeneration::kBlackwell) return {90, 80, 70, 60, 50, 45, 40, 30, 24, 20, 19, 18};
  if (g == GpuGeneration::kHopper) return {60, 50, 40, 30, 24, 20, 15, 12, 11, 6, 3};
  return {40, 30, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3};
}
std::vector<double> inter_speeds(GpuGeneration g) {
  if (g == GpuGeneration::kBlackwell) {
    return {96, 86, 80, 48, 45.1, 42, 40, 30, 24, 22, 20, 17.5, 15, 12, 6, 3, 2.4, 1.2, 0.24, 0.12};
  }
  if (g == GpuGeneration::kHopper) {
    return {48, 45, 42, 40, 30, 24, 22, 20, 17.5, 15, 12, 6, 3, 2.4, 1.2, 0.24, 0.12};
  }
  return {48, 30, 28, 24, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3, 2.4, 1.2, 0.24, 0.12};
}

// The fastest speed the search tries that fits `available`.
double fitting(const std::vector<double>& speeds, double available) {
  for (double s : speeds) {
    if (s <= available) return s;
  }
  return speeds.back();
}

}  // namespace

NcclTopology nccl_topology(const ClusterSpec& cluster, std::span<const int32_t> group) {
  NcclTopology t;
  const GpuGeneration gen = cluster.collectives.generation;
  t.generation = gen;
  t.ranks = static_cast<int>(group.size());
  std::set<int> domains;
  for (int32_t d : group) domains.insert(cluster.devices[d].node / cluster.nvlink_domain_nodes);
  t.nodes = static_cast<int>(domains.size());
  // A group across the leaves (pods) of an oversubscribed fabric: NCCL's NIC speed is what a
  // NIC gets of the uplink (ClusterSpec::inter_leaf).
  bool across_leaves = false;
  for (int32_t d : group) across_leaves = across_leaves || cluster.across_leaves(group[0], d);
  const LinkSpec& network = across_leaves ? cluster.inter_leaf : cluster.inter_node;
  const int ppn = std::max(1, t.ranks / t.nodes);
  const bool nvswitch = cluster.fabric.intra == IntraNodeFabric::kNvSwitch;
  const bool nvlink = cluster.fabric.intra != IntraNodeFabric::kPcieSwitch;
  const double gb = 1e-9;
  const double intra = cluster.intra_node.bandwidth_bytes_per_s * gb *
                       (nvlink ? nccl_nvlink_fraction(gen) : 48.0 / 63.0);
  const double net = fitting(inter_speeds(gen), network.bandwidth_bytes_per_s * gb);
  if (t.nodes == 1) {
    // Rings at the fastest speed that fits, as many as the NVLinks carry, then duplicated.
    double speed = fitting(intra_speeds(gen), intra);
    int channels = static_cast<int>(std::clamp(std::floor(intra / speed), 1.0, 16.0));
    if (speed >= 25) channels *= 2, speed /= 2;
    t.ring = t.tree = {channels, speed, speed, nvlink};
    t.runtime_channels = std::min(64, 2 * channels);
  } else {
    if (ppn > 1) {
      // A channel per NIC the node's GPUs reach (rail: one per GPU).
      const int nics = cluster.fabric.nics_per_node > 0 ? cluster.fabric.nics_per_node : ppn;
      const int channels = std::min(ppn, nics);
      t.ring = t.tree = {channels, net, net, nvlink};
      t.runtime_channels = std::max(16, 2 * channels);
    } else {
      t.ring = {2, net / 2, net / 2, nvlink};
      t.tree = {2, net, net / 2, nvlink};
      t.runtime_channels = 4;
      t.pat = true;
    }
    t.tree_pattern_simple = gen >= GpuGeneration::kHopper;
  }
  if (nvswitch && gen >= GpuGeneration::kHopper && ppn >= 2) {
    // NVLS: a channel per GPU (at most 32); the head GPU's links carry two, the others one.
    const int channels = std::min(32, ppn);
    const double speed = fitting(intra_speeds(gen), intra / (channels + 1));
    t.nvls = {channels, speed, t.nodes == 1 ? 2 * speed : net, true};
  }
  return t;
}

NcclChoice nccl_collective_choice(const ClusterSpec& cluster, NcclCollective collective,
                                  std::span<const int32_t> group, int64_t bytes) {
  return nccl_choose(nccl_topology(cluster, group), collective, static_cast<double>(bytes),
                     cluster.collectives.pinned);
}

CollectiveSchedule nccl_schedule(const ClusterSpec& cluster, NcclCollective collective,
                                 std::span<const int32_t> group, int64_t bytes) {
  const size_t n = group.size();
  if (n < 2 || bytes <= 0) return {};
  const NcclChoice choice = nccl_collective_choice(cluster, collective, group, bytes);
  const double bandwidth_s = static_cast<double>(bytes) / (choice.bandwidth_gbytes_per_s * 1e9);
  FlowPhase phase;
  double link_latency = 0;
  for (size_t k = 0; k < n; ++k) {
    const int32_t from = group[k], to = group[(k + 1) % n];
    // The flow's bytes take NCCL's time on the link as built; on a slower one (a device's
    // link_scale) the lock step waits for it.
    const LinkSpec& link = cluster.nominal_link(from, to);
    // Bounded, so that links of any speed (a what-if's "free" ones) give whole byte counts.
    constexpr double kMostBytes = 1e18;
    phase.flows.push_back(
        {from, to,
         std::llround(std::min(kMostBytes, std::ceil(bandwidth_s * link.bandwidth_bytes_per_s)))});
    link_latency = std::max(link_latency, link.latency_s);
  }
  phase.overhead_s = std::max(0.0, choice.latency_us * 1e-6 - link_latency);
  return {phase};
}

}  // namespace pipetwin
