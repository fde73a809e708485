// Every collective of the network model against its textbook closed form (alpha-beta, n
// members, buffer B): on identical links both its uniform form and its time over a placed
// group equal the formula; on a group that spans nodes each lock-step round costs its
// slowest link, worked out here by hand.
#include "sim/network/collective_algorithm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

#include "sim/network/network_model.h"
#include "sim/network/two_level_allreduce.h"
#include "two_node_cluster.h"

namespace pipetwin {
namespace {

using testing::kInfiniBand;
using testing::kNvLink;
using testing::plain_cluster;

constexpr double kBytes = 840.0 * 1024 * 1024;  // divisible by every group size below

double t(const LinkSpec& link, double bytes) {
  return link.latency_s + bytes / link.bandwidth_bytes_per_s;
}

int ceil_log2(int n) { return static_cast<int>(std::ceil(std::log2(n))); }

// The textbook formulas, written out independently of the code.
double textbook(Collective kind, int n, const LinkSpec& link) {
  const double a = link.latency_s, bw = link.bandwidth_bytes_per_s, b = kBytes;
  switch (kind) {
    case Collective::kAllReduceRing:
    case Collective::kAllReduceTwoLevel:  // one node: the ring's reduce-scatter + all-gather
      return 2.0 * (n - 1) / n * b / bw + 2.0 * (n - 1) * a;
    case Collective::kReduceScatter:
    case Collective::kAllGather:
    case Collective::kAllToAll:
      return (n - 1.0) / n * b / bw + (n - 1.0) * a;
    case Collective::kAllReduceTree:
      return 2.0 * ceil_log2(n) * (a + b / bw);
    case Collective::kBroadcast:
      return ceil_log2(n) * (a + b / bw);
  }
  return -1;
}

const Collective kAll[] = {Collective::kAllReduceRing,     Collective::kAllReduceTree,
                           Collective::kAllReduceTwoLevel, Collective::kReduceScatter,
                           Collective::kAllGather,         Collective::kAllToAll,
                           Collective::kBroadcast};

std::vector<int32_t> first_devices(int n) {
  std::vector<int32_t> group;
  for (int d = 0; d < n; ++d) group.push_back(d);
  return group;
}

TEST(CollectiveAlgorithm, UniformGroupsMatchTheTextbookFormula) {
  for (Collective kind : kAll) {
    const CollectiveAlgorithm& algorithm = collective_algorithm(kind);
    for (int n : {2, 3, 4, 5, 8}) {
      SCOPED_TRACE(std::string(algorithm.name()) + ", n = " + std::to_string(n));
      const ClusterSpec cluster = plain_cluster(1, n, kNvLink, kInfiniBand);
      const double expected = textbook(kind, n, kNvLink);
      EXPECT_NEAR(algorithm.uniform_seconds(kBytes, n, kNvLink), expected, 1e-12 * expected);
      EXPECT_NEAR(collective_seconds(cluster, kind, first_devices(n), static_cast<int64_t>(kBytes)),
                  expected, 1e-12 * expected);
    }
  }
}

TEST(CollectiveAlgorithm, OneMemberCostsNothing) {
  const ClusterSpec cluster = plain_cluster(1, 2, kNvLink, kInfiniBand);
  for (Collective kind : kAll) {
    EXPECT_EQ(collective_seconds(cluster, kind, std::vector<int32_t>{1}, 1 << 20), 0);
    EXPECT_EQ(collective_algorithm(kind).uniform_seconds(1 << 20, 1, kNvLink), 0);
  }
}

TEST(CollectiveAlgorithm, TwoLevelIsAnIntraNodeRingPlusAnInterNodeRingOfAShard) {
  for (auto [p, nodes] : {std::pair{2, 2}, {4, 2}, {2, 3}, {8, 4}, {1, 4}}) {
    SCOPED_TRACE(std::to_string(p) + " per node x " + std::to_string(nodes));
    const ClusterSpec cluster = plain_cluster(nodes, p, kNvLink, kInfiniBand);
    const double expected =
        2.0 * (p - 1) / p * kBytes / kNvLink.bandwidth_bytes_per_s +
        2.0 * (p - 1) * kNvLink.latency_s +
        2.0 * (nodes - 1) / nodes * (kBytes / p) / kInfiniBand.bandwidth_bytes_per_s +
        2.0 * (nodes - 1) * kInfiniBand.latency_s;
    EXPECT_NEAR(two_level_allreduce_seconds(kBytes, p, nodes, kNvLink, kInfiniBand), expected,
                1e-12 * expected);
    EXPECT_NEAR(collective_seconds(cluster, Collective::kAllReduceTwoLevel,
                                   first_devices(p * nodes), static_cast<int64_t>(kBytes)),
                expected, 1e-12 * expected);
  }
}

TEST(CollectiveAlgorithm, TwoLevelRejectsUnevenNodes) {
  const ClusterSpec cluster = plain_cluster(2, 2, kNvLink, kInfiniBand);
  EXPECT_THROW(collective_seconds(cluster, Collective::kAllReduceTwoLevel,
                                  std::vector<int32_t>{0, 1, 2}, 1 << 20),
               std::invalid_argument);
}

// Devices 0, 1 on node 0 and 2, 3 on node 1, the group in that order: the ring's links
// 1->2 and 3->0 cross nodes, so every ring step waits for InfiniBand; the binomial tree's
// one round 0<->2 crosses and its other round stays inside the nodes.
TEST(CollectiveAlgorithm, AcrossNodesEveryRoundCostsItsSlowestLink) {
  const ClusterSpec cluster = plain_cluster(2, 2, kNvLink, kInfiniBand);
  const std::vector<int32_t> group = first_devices(4);
  const double quarter = kBytes / 4;
  const std::map<Collective, double> expected = {
      {Collective::kAllReduceRing, 6 * t(kInfiniBand, quarter)},
      {Collective::kReduceScatter, 3 * t(kInfiniBand, quarter)},
      {Collective::kAllGather, 3 * t(kInfiniBand, quarter)},
      {Collective::kAllToAll, 3 * t(kInfiniBand, quarter)},
      {Collective::kBroadcast, t(kInfiniBand, kBytes) + t(kNvLink, kBytes)},
      {Collective::kAllReduceTree, 2 * (t(kInfiniBand, kBytes) + t(kNvLink, kBytes))},
      {Collective::kAllReduceTwoLevel, 2 * t(kNvLink, kBytes / 2) + 2 * t(kInfiniBand, quarter)},
  };
  for (const auto& [kind, seconds] : expected) {
    SCOPED_TRACE(std::string(collective_algorithm(kind).name()));
    EXPECT_NEAR(collective_seconds(cluster, kind, group, static_cast<int64_t>(kBytes)), seconds,
                1e-12 * seconds);
  }
}

// A tensor-parallel op holds several all-reduces: they run one after the other on chunks
// of their own size, each paying its latencies.
TEST(CollectiveAlgorithm, SeveralCollectivesInOneOpRunOneAfterTheOther) {
  const ClusterSpec cluster = plain_cluster(1, 4, kNvLink, kInfiniBand);
  const std::vector<int32_t> group = first_devices(4);
  const int64_t bytes = static_cast<int64_t>(kBytes);
  for (Collective kind : kAll) {
    const double one = collective_seconds(cluster, kind, group, bytes / 3);
    EXPECT_NEAR(collective_seconds(cluster, kind, group, bytes, 3), 3 * one, 1e-12 * one);
  }
}

// What each algorithm's flows must move, whatever the timing.
TEST(CollectiveAlgorithm, BroadcastReachesEveryMemberOnceFromOneThatHasTheMessage) {
  const ClusterSpec cluster = plain_cluster(1, 7, kNvLink, kInfiniBand);
  const std::vector<int32_t> group = {3, 0, 6, 1, 5, 2, 4};
  std::set<int32_t> have = {3};
  for (const FlowPhase& phase : collective_flows(cluster, Collective::kBroadcast, group, 100)) {
    std::set<int32_t> received;
    for (const PointFlow& flow : phase.flows) {
      EXPECT_TRUE(have.count(flow.from)) << flow.from;
      EXPECT_TRUE(received.insert(flow.to).second);
      EXPECT_EQ(flow.bytes, 100);
    }
    have.insert(received.begin(), received.end());
  }
  EXPECT_EQ(have.size(), group.size());
}

TEST(CollectiveAlgorithm, AllToAllSendsOneBlockToEveryOtherMember) {
  const ClusterSpec cluster = plain_cluster(1, 5, kNvLink, kInfiniBand);
  std::set<std::pair<int32_t, int32_t>> pairs;
  for (const FlowPhase& phase :
       collective_flows(cluster, Collective::kAllToAll, first_devices(5), 500)) {
    std::set<int32_t> senders, receivers;
    for (const PointFlow& flow : phase.flows) {
      EXPECT_NE(flow.from, flow.to);
      EXPECT_EQ(flow.bytes, 100);
      EXPECT_TRUE(pairs.insert({flow.from, flow.to}).second);
      senders.insert(flow.from);
      receivers.insert(flow.to);
    }
    EXPECT_EQ(senders.size(), 5u);  // every round a permutation
    EXPECT_EQ(receivers.size(), 5u);
  }
  EXPECT_EQ(pairs.size(), 20u);
}

// Bandwidth-optimal all-reduce: each member sends 2(n-1)/n of the buffer, in every form.
TEST(CollectiveAlgorithm, RingAndTwoLevelSendTwiceTheBufferLessOneShare) {
  const ClusterSpec cluster = plain_cluster(2, 4, kNvLink, kInfiniBand);
  const int64_t bytes = 8 * 1000;
  for (Collective kind : {Collective::kAllReduceRing, Collective::kAllReduceTwoLevel}) {
    std::map<int32_t, int64_t> sent;
    for (const FlowPhase& phase : collective_flows(cluster, kind, first_devices(8), bytes)) {
      for (const PointFlow& flow : phase.flows) sent[flow.from] += phase.repeats * flow.bytes;
    }
    ASSERT_EQ(sent.size(), 8u);
    for (const auto& [device, total] : sent) {
      // The ring: 14 chunks of 1000; two-level: 6 of 2000 in the node, 2 of 1000 across.
      EXPECT_EQ(total, 14000) << device;
    }
  }
}

// ZeRO replaces an all-reduce by a reduce-scatter and an all-gather of the same buffer: the
// two rings send what the all-reduce's ring sends, and on identical links take its time.
TEST(CollectiveAlgorithm, ReduceScatterAndAllGatherMoveOneAllReduce) {
  const ClusterSpec cluster = plain_cluster(2, 4, kNvLink, kInfiniBand);
  for (int32_t n = 2; n <= 8; ++n) {
    const int64_t bytes = 840 * 1000;  // n divides it
    const auto sent = [&](Collective kind) {
      int64_t total = 0;
      for (const FlowPhase& phase : collective_flows(cluster, kind, first_devices(n), bytes)) {
        for (const PointFlow& flow : phase.flows) total += phase.repeats * flow.bytes;
      }
      return total;
    };
    EXPECT_EQ(sent(Collective::kReduceScatter) + sent(Collective::kAllGather),
              sent(Collective::kAllReduceRing))
        << n;
    const auto uniform = [&](Collective kind) {
      return collective_algorithm(kind).uniform_seconds(static_cast<double>(bytes), n, kNvLink);
    };
    EXPECT_DOUBLE_EQ(uniform(Collective::kReduceScatter) + uniform(Collective::kAllGather),
                     uniform(Collective::kAllReduceRing))
        << n;
  }
}

}  // namespace
}  // namespace pipetwin
