// An expert group's dispatch or combine (a Program's ALL_TO_ALL of GroupKind::kExpertExchange)
// as NCCL and DeepEP run it on the cluster, with every member's send buffer of `bytes`
// holding top_k copies of its tokens:
//   one NVLink domain: the pairwise all-to-all (all_to_all.cpp);
//   several: D - 1 steps, in step s each member sending to the member of its rail (the same
//   place in its domain) in the s-th next domain, and in the same step to a GPU of its own
//   domain over NVLink, so that network and NVLink traffic run side by side. What crosses the
//   network, per member:
//     ALLTOALL  bytes x (n - n_d) / n, the copies for experts in other domains (n members,
//               n_d per domain), aggregated per domain on the rail (NCCL's PXN);
//     DEEPEP    bytes / top_k x u (D - 1) / D, one copy per domain the token's experts touch:
//               u = D (1 - C(E - E/D, k) / C(E, k)) of D domains for k of E experts spread
//               evenly, at most max_nodes_per_token;
//   and over NVLink bytes x (n_d - 1) / n_d for DEEPEP (the received copies forwarded to their
//   experts' GPUs), bytes x (n_d - 1) / n for ALLTOALL.
// ALLGATHER gathers one copy of every member's tokens (bytes / top_k each) over the group: the
// all-gather of NCCL's model (or the ring), n x bytes / top_k in all; its combine, a
// reduce-scatter of as much, costs the same.
// docs/parallelism.md, "Token dispatchers", states the model and its assumptions.
#pragma once

#include <cstdint>
#include <span>

#include "sim/network/collective_schedule.h"
#include "sim/spec/cluster_spec.h"
#include "sim/spec/expert_dispatch.h"

namespace pipetwin {

// The expected NVLink domains, of `domains` holding `experts` / domains experts each, that a
// token's top_k experts (drawn evenly) are in, at most max_nodes_per_token (when set).
double expected_domains_touched(const ExpertDispatch& dispatch, int32_t domains);

// `count` exchanges of ceil(bytes / count) each over `group`, one after the other. The
// cluster's collectives model TEXTBOOK keeps the pairwise all-to-all for ALLTOALL.
CollectiveSchedule expert_exchange_flows(const ClusterSpec& cluster, std::span<const int32_t> group,
                                         int64_t bytes, int32_t count,
                                         const ExpertDispatch& dispatch);

double expert_exchange_seconds(const ClusterSpec& cluster, std::span<const int32_t> group,
                               int64_t bytes, int32_t count, const ExpertDispatch& dispatch);

}  // namespace pipetwin
