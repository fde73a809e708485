// A Program's collective as NCCL runs it (cluster.collectives.model NCCL): the communicator NCCL
// would build over the group (nccl_topology: its nodes are NVLink domains, its channel graphs
// derived from the links as NCCL's topology search derives them), the algorithm and protocol
// NCCL's tuning model picks for the call (sim/network/nccl_tuning.h), and flows that take that
// model's time (nccl_schedule).
#pragma once

#include <cstdint>
#include <span>

#include "sim/network/collective_schedule.h"
#include "sim/network/nccl_tuning.h"
#include "sim/spec/cluster_spec.h"

namespace pipetwin {

NcclTopology nccl_topology(const ClusterSpec& cluster, std::span<const int32_t> group);

// NCCL's choice for one collective of `bytes` over `group`, honouring a pinned algorithm.
NcclChoice nccl_collective_choice(const ClusterSpec& cluster, NcclCollective collective,
                                  std::span<const int32_t> group, int64_t bytes);

// One phase in which every member sends to the next in group order (the load the chosen
// algorithm puts on each GPU's ports and NICs, so that SimGrid sees it contend) the bytes its
// link carries in the model's bandwidth time, and after which the model's latency beyond the
// links' is waited out: without contention the phase takes NCCL's time. Empty for one member.
CollectiveSchedule nccl_schedule(const ClusterSpec& cluster, NcclCollective collective,
                                 std::span<const int32_t> group, int64_t bytes);

}  // namespace pipetwin
