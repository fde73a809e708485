// An expert group's dispatch and combine (sim/network/expert_exchange.h): the NVLink domains a
// token's experts touch against brute force; the bytes each member puts on the network in
// closed form for NCCL's all-to-all (the copies for other domains) and DeepEP (one per domain
// touched, never more than max_nodes_per_token); the time as the slowest link of each step.
#include "sim/network/expert_exchange.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <vector>

#include "sim/network/network_model.h"
#include "two_node_cluster.h"

namespace pipetwin {
namespace {

using testing::kInfiniBand;
using testing::kNvLink;

ClusterSpec nccl_cluster(int nodes, int per_node) {
  ClusterSpec cluster = testing::plain_cluster(nodes, per_node, kNvLink, kInfiniBand);
  cluster.collectives.model = CollectivesSpec::Model::kNccl;
  return cluster;
}

std::vector<int32_t> all_devices(const ClusterSpec& cluster) {
  std::vector<int32_t> group;
  for (const DeviceSpec& d : cluster.devices) group.push_back(d.id);
  return group;
}

// Per member: the bytes it sends to other nodes and within its own, over the whole exchange.
struct SentBytes {
  std::map<int32_t, double> network, nvlink;
};
SentBytes sent(const ClusterSpec& cluster, const CollectiveSchedule& schedule) {
  SentBytes s;
  for (const FlowPhase& phase : schedule) {
    for (const PointFlow& f : phase.flows) {
      const bool across = cluster.devices[f.from].node != cluster.devices[f.to].node;
      (across ? s.network : s.nvlink)[f.from] += static_cast<double>(f.bytes) * phase.repeats;
    }
  }
  return s;
}

// Every choice of k of E experts, E / D per domain in order: the mean count of domains hit.
double brute_force_domains(int experts, int k, int domains) {
  double total = 0, choices = 0;
  std::vector<int> pick(k);
  for (int i = 0; i < k; ++i) pick[i] = i;
  while (true) {
    std::set<int> hit;
    for (int e : pick) hit.insert(e / (experts / domains));
    total += static_cast<double>(hit.size());
    ++choices;
    int i = k - 1;
    while (i >= 0 && pick[i] == experts - k + i) --i;
    if (i < 0) break;
    ++pick[i];
    for (int j = i + 1; j < k; ++j) pick[j] = pick[j - 1] + 1;
  }
  return total / choices;
}

TEST(ExpertExchange, DomainsTouchedAreTheBruteForceMean) {
  for (const auto& [experts, k, domains] :
       std::vector<std::tuple<int, int, int>>{{8, 2, 4}, {16, 4, 4}, {24, 6, 6}, {24, 3, 2}}) {
    const ExpertDispatch dispatch{ExpertDispatch::Kind::kDeepEp, k, experts, 0};
    EXPECT_NEAR(expected_domains_touched(dispatch, domains),
                brute_force_domains(experts, k, domains), 1e-9)
        << experts << " experts, top-" << k << ", " << domains << " domains";
  }
  const ExpertDispatch limited{ExpertDispatch::Kind::kDeepEp, 8, 256, 4};
  EXPECT_DOUBLE_EQ(expected_domains_touched(limited, 8), 4);  // 5.3 unlimited
}

TEST(ExpertExchange, NcclsAllToAllPutsTheOtherDomainsCopiesOnTheNetwork) {
  const ClusterSpec cluster = nccl_cluster(4, 8);
  const std::vector<int32_t> group = all_devices(cluster);
  const int64_t bytes = 32 << 20;
  const ExpertDispatch all_to_all;
  const CollectiveSchedule schedule = expert_exchange_flows(cluster, group, bytes, 2, all_to_all);
  const SentBytes s = sent(cluster, schedule);
  for (int32_t d : group) {
    EXPECT_NEAR(s.network.at(d), 2.0 * (bytes / 2) * 24 / 32, 8) << d;
    EXPECT_NEAR(s.nvlink.at(d), 2.0 * (bytes / 2) * 7 / 32, 8) << d;
  }
  // Three steps of a quarter of each exchange's buffer on every member's network link (the
  // NVLink flows beside them are faster), twice.
  const double step = kInfiniBand.latency_s + (bytes / 2 / 4.0) / kInfiniBand.bandwidth_bytes_per_s;
  EXPECT_NEAR(expert_exchange_seconds(cluster, group, bytes, 2, all_to_all), 2 * 3 * step,
              1e-9 * step);
  // The pairwise all-to-all's steps each cross a node somewhere: 31 of a 32nd each.
  ClusterSpec textbook = cluster;
  textbook.collectives.model = CollectivesSpec::Model::kTextbook;
  EXPECT_GT(expert_exchange_seconds(textbook, group, bytes, 2, all_to_all),
            1.2 * expert_exchange_seconds(cluster, group, bytes, 2, all_to_all));
}

TEST(ExpertExchange, DeepEpSendsATokenOncePerDomainItsExpertsAreIn) {
  const ClusterSpec cluster = nccl_cluster(8, 4);
  const std::vector<int32_t> group = all_devices(cluster);
  const int64_t bytes = 8 * (1 << 20);  // 1 MiB of tokens, top-8
  for (const int limit : {0, 2}) {
    const ExpertDispatch deep_ep{ExpertDispatch::Kind::kDeepEp, 8, 64, limit};
    const double domains = expected_domains_touched(deep_ep, 8);
    EXPECT_LE(domains, limit > 0 ? limit : 8);
    const SentBytes s = sent(cluster, expert_exchange_flows(cluster, group, bytes, 1, deep_ep));
    for (int32_t d : group) {
      // One copy per other domain touched; never more than the limit's worth.
      EXPECT_NEAR(s.network.at(d), (1 << 20) * domains * 7 / 8, 8) << d;
      if (limit > 0) {
        EXPECT_LE(s.network.at(d), (1 << 20) * limit + 8);
      }
      // The copies forwarded to the experts' GPUs inside the domain.
      EXPECT_NEAR(s.nvlink.at(d), bytes * 3.0 / 4, 8) << d;
    }
  }
}

// Megatron-Core's allgather dispatcher gathers one copy of every member's tokens: an all-gather
// of n x bytes / top_k per exchange.
TEST(ExpertExchange, AllGatherGathersOneCopyOfEveryMembersTokens) {
  for (const int nodes : {1, 4}) {
    const ClusterSpec cluster = nccl_cluster(nodes, 8);
    const std::vector<int32_t> group = all_devices(cluster);
    const int64_t bytes = 8 * (1 << 20), n = static_cast<int64_t>(group.size());
    const ExpertDispatch all_gather{ExpertDispatch::Kind::kAllGather, 8, 64, 0};
    EXPECT_DOUBLE_EQ(expert_exchange_seconds(cluster, group, 2 * bytes, 2, all_gather),
                     collective_seconds(cluster, kProgramAllGather, group, 2 * n * (1 << 20), 2))
        << nodes;
  }
}

// Inside one NVLink domain every dispatcher is the pairwise all-to-all.
TEST(ExpertExchange, InsideOneDomainItIsThePairwiseAllToAll) {
  const ClusterSpec cluster = nccl_cluster(1, 8);
  const std::vector<int32_t> group = all_devices(cluster);
  for (const auto kind : {ExpertDispatch::Kind::kAllToAll, ExpertDispatch::Kind::kDeepEp}) {
    EXPECT_DOUBLE_EQ(expert_exchange_seconds(cluster, group, 1 << 24, 2, {kind, 2, 16, 0}),
                     collective_seconds(cluster, kProgramAllToAll, group, 1 << 24, 2));
  }
}

}  // namespace
}  // namespace pipetwin
