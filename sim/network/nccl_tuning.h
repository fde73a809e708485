// NCCL's own cost model of a collective (NCCL 2.30, src/graph/tuning.cc: ncclTopoTuneModel and
// ncclTopoGetAlgoTime; src/enqueue.cc: topoGetAlgoInfo), by which NCCL picks an algorithm and a
// protocol for every call: each (algorithm, protocol) gets a latency and a bandwidth from the
// communicator's shape (ranks, nodes, GPU generation) and its channel graphs (channels and
// per-channel speeds), a call of n bytes takes latency + n / bandwidth, and the fastest wins.
// docs/network.md gives the tables and the derivation of the graphs from a cluster.
#pragma once

#include <array>
#include <optional>
#include <string_view>

#include "sim/spec/cluster_spec.h"

namespace pipetwin {

enum class NcclProtocol { kLL, kLL128, kSimple };
enum class NcclCollective { kAllReduce, kAllGather, kReduceScatter };

std::string_view nccl_algorithm_name(NcclAlgorithm algorithm);
std::string_view nccl_protocol_name(NcclProtocol protocol);

// One of the communicator's channel graphs (src/graph/search.cc): how many channels, and each
// channel's speed inside a node and between nodes, GB/s.
struct NcclGraph {
  int channels = 0;  // 0: the graph does not exist (no NVLS without NVSwitch)
  double bw_intra = 0, bw_inter = 0;
  bool nvlink_intra = true;  // the intra-node hops are NVLink (else PCIe)
};

struct NcclTopology {
  int ranks = 1;
  int nodes = 1;  // NCCL's nodes: NVLink domains
  GpuGeneration generation = GpuGeneration::kHopper;
  bool intel_cpu = true;     // the llMaxBw row and the network post overhead (1 us)
  int runtime_channels = 1;  // comm->nChannels (the ring-Simple plateau test)
  NcclGraph ring, tree, nvls;
  bool tree_pattern_simple = false;  // the search fell back to the simple tree pattern (x 0.85)
  bool pat = false;                  // PAT enabled: one GPU per node
};

struct NcclCost {
  double latency_us = 0;
  double bandwidth_gbytes_per_s = 0;  // 0: not available
};

struct NcclChoice {
  NcclAlgorithm algorithm = NcclAlgorithm::kRing;
  NcclProtocol protocol = NcclProtocol::kSimple;
  double latency_us = 0;              // after the per-call corrections
  double bandwidth_gbytes_per_s = 0;  // after the per-call corrections
  double seconds = 0;                 // latency + bytes / bandwidth
};

// The model's latency and bandwidth of every entry, as ncclTopoTuneModel fills them.
NcclCost nccl_cost(const NcclTopology& topology, NcclCollective collective, NcclAlgorithm algorithm,
                   NcclProtocol protocol);

// The time of a call of `bytes` (NCCL's nBytes: the buffer of an all-reduce, the whole
// gathered or scattered buffer otherwise) with one entry, as ncclTopoGetAlgoTime gives it;
// nullopt where the entry is not available.
std::optional<NcclChoice> nccl_time(const NcclTopology& topology, NcclCollective collective,
                                    NcclAlgorithm algorithm, NcclProtocol protocol, double bytes);

// The fastest available entry (topoGetAlgoInfo), or the fastest protocol of `pinned` when given
// and available for this call.
NcclChoice nccl_choose(const NcclTopology& topology, NcclCollective collective, double bytes,
                       std::optional<NcclAlgorithm> pinned = std::nullopt);

}  // namespace pipetwin
