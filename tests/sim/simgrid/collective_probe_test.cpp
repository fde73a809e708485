// Every collective's flows run by the SimGrid engine in exact mode (a dedicated link per
// communicating pair, CM02 without TCP effects), aggregated and step by step, take the
// network model's closed form to 1e-9 relative: on one node and across two, with groups in
// ring order and shuffled. One engine per process: each run forks (run_in_child.h).
#include "sim/simgrid/collective_probe.h"

#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "sim/network/nccl_collective.h"
#include "sim/network/network_model.h"
#include "two_node_cluster.h"

namespace pipetwin {
namespace {

using testing::kInfiniBand;
using testing::kNvLink;
using testing::plain_cluster;

void expect_simgrid_matches_closed_form(Collective kind, bool nccl = false,
                                        std::optional<NcclAlgorithm> pinned = {}) {
  struct Case {
    int nodes, per_node;
    std::vector<int32_t> group;
  };
  const Case cases[] = {
      {1, 4, {0, 1, 2, 3}},
      {1, 5, {4, 0, 3, 1, 2}},
      {2, 2, {0, 1, 2, 3}},
      {2, 3, {0, 3, 1, 4, 2, 5}},
  };
  for (const Case& c : cases) {
    ClusterSpec cluster = plain_cluster(c.nodes, c.per_node, kNvLink, kInfiniBand);
    if (nccl) {
      cluster.collectives = {CollectivesSpec::Model::kNccl, pinned, GpuGeneration::kHopper};
    }
    const int64_t bytes = 3 * 1000 * 1000 + 7;  // chunks rounded up
    const CollectiveSchedule flows = collective_flows(cluster, kind, c.group, bytes, 2);
    const double closed_form = collective_seconds(cluster, kind, c.group, bytes, 2);
    for (bool step_by_step : {false, true}) {
      SimgridSettings settings;
      settings.exact = true;
      settings.collective_steps = step_by_step;
      SCOPED_TRACE(std::to_string(c.nodes) + " x " + std::to_string(c.per_node) +
                   (step_by_step ? ", step by step" : ", aggregated"));
      EXPECT_GT(closed_form, 0);
      EXPECT_NEAR(simulate_collective(cluster, c.group, flows, settings), closed_form,
                  1e-9 * closed_form);
    }
    if (nccl) {  // the closed form is NCCL's time, twice (to the bytes the flows round up)
      const NcclCollective collective = kind == Collective::kAllGather ? NcclCollective::kAllGather
                                        : kind == Collective::kReduceScatter
                                            ? NcclCollective::kReduceScatter
                                            : NcclCollective::kAllReduce;
      const NcclChoice choice =
          nccl_collective_choice(cluster, collective, c.group, (bytes + 1) / 2);
      EXPECT_NEAR(closed_form, 2 * choice.seconds, 1e-6 * closed_form);
    }
  }
}

// Collectives as NCCL picks and prices them, each algorithm pinned in turn: SimGrid's flows take
// the model's time.
TEST(CollectiveProbe, ExactNcclCollectivesAreNcclsTimes) {
  using A = NcclAlgorithm;
  for (std::optional<A> pinned : std::vector<std::optional<A>>{std::nullopt, A::kRing, A::kTree,
                                                               A::kNvls, A::kNvlsTree, A::kPat}) {
    SCOPED_TRACE(pinned ? static_cast<int>(*pinned) : -1);
    for (Collective kind :
         {Collective::kAllReduceRing, Collective::kReduceScatter, Collective::kAllGather}) {
      expect_simgrid_matches_closed_form(kind, true, pinned);
    }
  }
}

TEST(CollectiveProbe, ExactRingAllReduceIsItsClosedForm) {
  expect_simgrid_matches_closed_form(Collective::kAllReduceRing);
}
TEST(CollectiveProbe, ExactTreeAllReduceIsItsClosedForm) {
  expect_simgrid_matches_closed_form(Collective::kAllReduceTree);
}
TEST(CollectiveProbe, ExactTwoLevelAllReduceIsItsClosedForm) {
  expect_simgrid_matches_closed_form(Collective::kAllReduceTwoLevel);
}
TEST(CollectiveProbe, ExactReduceScatterIsItsClosedForm) {
  expect_simgrid_matches_closed_form(Collective::kReduceScatter);
}
TEST(CollectiveProbe, ExactAllGatherIsItsClosedForm) {
  expect_simgrid_matches_closed_form(Collective::kAllGather);
}
TEST(CollectiveProbe, ExactAllToAllIsItsClosedForm) {
  expect_simgrid_matches_closed_form(Collective::kAllToAll);
}
TEST(CollectiveProbe, ExactBroadcastIsItsClosedForm) {
  expect_simgrid_matches_closed_form(Collective::kBroadcast);
}

// On the shared fabric of one node's NVSwitch, an all-to-all's flows into one GPU port
// share it: never faster than the dedicated links.
TEST(CollectiveProbe, SharedFabricIsNeverFasterThanDedicatedLinks) {
  const ClusterSpec cluster = plain_cluster(2, 2, kNvLink, kInfiniBand);
  const std::vector<int32_t> group = {0, 1, 2, 3};
  const CollectiveSchedule flows = collective_flows(cluster, Collective::kAllToAll, group, 4 << 20);
  SimgridSettings exact;
  exact.exact = true;
  EXPECT_GE(simulate_collective(cluster, group, flows) * (1 + 1e-9),
            simulate_collective(cluster, group, flows, exact));
}

}  // namespace
}  // namespace pipetwin
