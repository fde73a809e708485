// Every constant below is NCCL 2.30.7's (src/graph/tuning.cc, ncclTunerConstantsDefaults and
// ncclTopoTuneModel; the line numbers of docs/network.md). Units: microseconds and GB/s.
#include "sim/network/nccl_tuning.h"

#include <algorithm>
#include <cmath>

namespace pipetwin {
namespace {

constexpr int kTree = 0, kRing = 1, kNvls = 2, kNvlsTree = 3, kPat = 4;
constexpr int kLL = 0, kLL128 = 1, kSimple = 2;

int index(NcclAlgorithm a) {
  switch (a) {
    case NcclAlgorithm::kTree:
      return kTree;
    case NcclAlgorithm::kRing:
      return kRing;
    case NcclAlgorithm::kNvls:
      return kNvls;
    case NcclAlgorithm::kNvlsTree:
      return kNvlsTree;
    case NcclAlgorithm::kPat:
      return kPat;
  }
  return kRing;
}
int index(NcclProtocol p) { return static_cast<int>(p); }

using Row = std::array<double, 3>;  // LL, LL128, Simple
// baseLatencies (Tree, Ring, NVLS, NVLSTree, PAT; CollNet is not modelled).
constexpr std::array<Row, 5> kBaseLatency = {
    {{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}, {0, 0, 0}, {0, 0, 0}, {8.0, 8.0, 8.0}}};
// hwLatencies[NVLINK], [PCI], [NET].
constexpr std::array<Row, 5> kNvlinkLatency = {
    {{.6, 1.25, 4}, {.6, 1.9, 3.4}, {0, 0, 25}, {0, 0, 25}, {0, 0, 4.0}}};
constexpr std::array<Row, 5> kPciLatency = {
    {{1.0, 1.9, 4}, {1.0, 2.5, 5.7}, {0, 0, 0}, {0, 0, 0}, {0, 0, 4.0}}};
constexpr std::array<Row, 5> kNetLatency = {
    {{5.0, 8.5, 14}, {2.7, 4.0, 14.0}, {0, 0, 18}, {0, 0, 20.9}, {0, 0, 14}}};
// Caps by generation (Volta, Ampere, Hopper, Blackwell) and nodes (1, 2, 3 or more).
using Caps = std::array<std::array<double, 3>, 4>;
constexpr Caps kLlMaxBw = {
    {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {2 * 141.0, 2 * 45.0, 2 * 35.0}}};
constexpr Caps kPerChannelRingLL128 = {
    {{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 36.7}, {40, 40, 40}}};
constexpr Caps kPerChannelTreeLL128 = {
    {{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}}};
constexpr Caps kPerChannelTree = {
    {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}}};
constexpr Caps kPerChannelNvlsTree = {
    {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0.0, 57.7, 45.5}, {0.0, 96.0, 80.0}}};
constexpr std::array<double, 4> kNvlsEfficiency = {0.0, 0.0, 0.85, 0.74};
// treeCorrectionFactor[protocol][log2(bytes / 64)].
constexpr std::array<std::array<double, 24>, 3> kTreeCorrection = {
    {{1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7,  .7,  .7,  .6,  .5,
      .4,  .4,  .5,  .6,  .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
     {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7,  .6,  .6,
      .6,  .6,  .6,  .6,  .8,  .9, .9, .9, .9, 1.0, 1.0, 1.0},
     {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5,
      .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9}}};

int log2_floor(double n) {
  if (n < 1) return -1;
  int k = 0;
  while (n >= 2) n /= 2, ++k;
  return k;
}

const NcclGraph& graph_of(const NcclTopology& t, int a) {
  if (a == kRing) return t.ring;
  if (a == kNvls || a == kNvlsTree) return t.nvls;
  return t.tree;  // tree and PAT (PAT runs on the tree graph)
}

bool modelled(const NcclTopology& t, NcclCollective c, int a, int p) {
  const bool all_reduce = c == NcclCollective::kAllReduce;
  if (graph_of(t, a).channels == 0) return false;
  if ((a == kNvls || a == kNvlsTree || a == kPat) && p != kSimple) return false;
  if (a == kTree || a == kNvlsTree) return all_reduce && (a == kTree || t.nodes > 1);
  if (a == kPat) return !all_reduce && t.pat;
  if (a == kNvls) {
    if (t.nvls.channels < 2) return false;
    // Without CollNet (SHARP) NVLS spans one node; AllGather/ReduceScatter across nodes too.
    return t.nodes == 1;
  }
  return true;
}

}  // namespace

std::string_view nccl_algorithm_name(NcclAlgorithm algorithm) {
  constexpr std::array<std::string_view, 5> names = {"Tree", "Ring", "NVLS", "NVLSTree", "PAT"};
  return names[index(algorithm)];
}

std::string_view nccl_protocol_name(NcclProtocol protocol) {
  constexpr std::array<std::string_view, 3> names = {"LL", "LL128", "Simple"};
  return names[index(protocol)];
}

NcclCost nccl_cost(const NcclTopology& t, NcclCollective c, NcclAlgorithm algorithm,
                   NcclProtocol protocol) {
  const int a = index(algorithm), p = index(protocol);
  if (!modelled(t, c, a, p)) return {};
  const bool all_reduce = c == NcclCollective::kAllReduce;
  const int gen = static_cast<int>(t.generation);
  const int by_nodes = t.nodes <= 2 ? t.nodes - 1 : 2;
  const int ll_row = t.nodes == 1 ? gen : (t.intel_cpu ? 0 : 1);
  const double ll_max = kLlMaxBw[ll_row][by_nodes];
  const NcclGraph& g = graph_of(t, a);
  const double ranks = t.ranks, ppn = static_cast<double>(t.ranks) / t.nodes;
  const double steps = all_reduce ? 2.0 * (t.ranks - 1) : t.ranks - 1.0;
  const double channels = g.channels;

  // Bandwidth (tuning.cc l.300-383).
  double bw = t.nodes <= 2 ? g.bw_intra : g.bw_inter;
  if (a == kNvls || a == kNvlsTree) {
    double intra = g.bw_intra * kNvlsEfficiency[gen] * (channels - 1) / channels;
    intra *= all_reduce ? 2.0 : (ppn - 1) / ppn;
    const double inter = g.bw_inter * (t.nodes <= 2 && a == kNvlsTree ? 2 : 1);
    bw = std::min(intra, inter);
    if (a == kNvlsTree) bw = std::min(bw, kPerChannelNvlsTree[gen][by_nodes]);
  }
  double bus = channels * bw;
  if (a == kRing && p == kLL) bus = std::min(ll_max, bus * 0.5);
  if (a == kRing && p == kLL128) {
    bus = std::min(bus * 0.92, channels * kPerChannelRingLL128[gen][by_nodes]);
  }
  if (a == kTree && all_reduce)
    bus = std::min(bus * 0.92, channels * kPerChannelTree[gen][by_nodes]);
  if (a == kTree && p == kLL) bus = std::min(bus / 3.8, ll_max);
  if (a == kTree && p == kLL128) {
    bus = std::min(bus * (t.nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0),
                   channels * kPerChannelTreeLL128[gen][by_nodes]);
  }
  if (a == kTree && t.tree_pattern_simple) bus *= 0.85;
  if (a == kPat) bus *= 0.75;
  if (a == kRing || (all_reduce && a != kPat)) {
    bus *= a == kTree ? 0.5 : ranks / steps;
  }

  // Latency (tuning.cc l.383-435).
  const auto& intra_table = g.nvlink_intra ? kNvlinkLatency : kPciLatency;
  const double intra_lat = intra_table[a][p];
  const double inter_lat = t.ranks == t.nodes ? kNetLatency[kTree][p] : kNetLatency[a][p];
  double lat = kBaseLatency[a][p];
  const int log_nodes = log2_floor(t.nodes);
  switch (a) {
    case kRing: {
      const double net_overhead =
          t.nodes > 1 ? (t.intel_cpu ? 1.0 : 2.0) * (p == kSimple ? 3 : 1) : 0;
      const double hop = std::max(intra_lat, net_overhead);
      const double inter_steps = t.nodes == 1 ? 0 : (all_reduce ? 2.0 : 1.0) * (t.nodes - 1);
      lat += (steps - inter_steps) * hop + inter_steps * inter_lat;
      break;
    }
    case kTree:
      lat += 2 * ((t.ranks / t.nodes - 1) * intra_lat + log_nodes * inter_lat);
      break;
    case kNvls:
      lat = intra_lat + (t.nodes > 1 ? inter_lat : 0);
      break;
    case kNvlsTree:
      lat += intra_lat + 2 * log_nodes * inter_lat;
      break;
    case kPat:
      lat += log_nodes * (inter_lat / 3.5) + ranks * 2.8;
      break;
  }
  return {lat, bus};
}

std::optional<NcclChoice> nccl_time(const NcclTopology& t, NcclCollective c,
                                    NcclAlgorithm algorithm, NcclProtocol protocol, double bytes) {
  const NcclCost cost = nccl_cost(t, c, algorithm, protocol);
  if (!(cost.bandwidth_gbytes_per_s > 0)) return std::nullopt;
  double bw = cost.bandwidth_gbytes_per_s, lat = cost.latency_us;
  const int log_size = log2_floor(bytes / 64);
  const int p = index(protocol);
  if (c == NcclCollective::kAllReduce && log_size >= 0) {
    if (algorithm == NcclAlgorithm::kTree && log_size < 23) bw *= kTreeCorrection[p][log_size];
    if (algorithm == NcclAlgorithm::kNvlsTree && log_size < 24 &&
        t.generation == GpuGeneration::kBlackwell) {
      bw *= kTreeCorrection[p][log_size];
    }
  }
  if (algorithm == NcclAlgorithm::kRing && protocol == NcclProtocol::kSimple && t.nodes > 1 &&
      c == NcclCollective::kAllReduce &&
      std::floor(bytes / (static_cast<double>(t.runtime_channels) * t.ranks)) >= 64) {
    lat *= t.generation < GpuGeneration::kAmpere ? 1.9 : 1.4;  // "plateau effect of ring"
  }
  return NcclChoice{algorithm, protocol, lat, bw, (lat + bytes / (1000 * bw)) * 1e-6};
}

NcclChoice nccl_choose(const NcclTopology& t, NcclCollective c, double bytes,
                       std::optional<NcclAlgorithm> pinned) {
  std::optional<NcclChoice> best;
  for (NcclAlgorithm a : {NcclAlgorithm::kTree, NcclAlgorithm::kRing, NcclAlgorithm::kNvls,
                          NcclAlgorithm::kNvlsTree, NcclAlgorithm::kPat}) {
    if (pinned && a != *pinned) continue;
    for (NcclProtocol p : {NcclProtocol::kLL, NcclProtocol::kLL128, NcclProtocol::kSimple}) {
      const std::optional<NcclChoice> choice = nccl_time(t, c, a, p, bytes);
      if (choice && (!best || choice->seconds < best->seconds)) best = choice;
    }
  }
  if (!best && pinned) return nccl_choose(t, c, bytes);  // the pinned one serves not this call
  return best.value_or(NcclChoice{});
}

}  // namespace pipetwin
