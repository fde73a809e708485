// MoE parallel folding (training.expert_tensor_parallel): the experts' ETP x EP x EDP over the
// same tensor x context x data-parallel GPUs of each stage as the attention's. The Program's
// expert all-to-all groups and expert-gradient groups are Megatron-Core's, rank for rank, as its
// RankGenerator builds them (megatron/core/parallel_state.py, worked out independently here);
// each GPU holds 1 / (EP x ETP) of the experts; with free links folding costs nothing; exact
// SimGrid reproduces the analytic times on random folded layouts under either dispatcher.
#include "sim/spec/expert_folding.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "folded_moe.h"
#include "same_times.h"
#include "sim/driver/build_program.h"
#include "sim/exec/analytic_executor.h"
#include "sim/scenario/loaded_scenario.h"
#include "sim/scenario/resolve_scenario.h"
#include "sim/simgrid/simgrid_executor.h"
#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

using Layout = testing::FoldedLayout;
using testing::describe;
using testing::folded_moe;

// Megatron-Core's RankGenerator: ranks numbered by `sizes` with the first dimension innermost;
// the groups of the dimensions in `in_group` are the ranks that differ only in those.
std::set<std::set<int>> megatron_groups(const std::vector<int>& sizes,
                                        const std::vector<bool>& in_group) {
  int world = 1;
  for (int s : sizes) world *= s;
  std::set<std::set<int>> groups;
  for (int rank = 0; rank < world; ++rank) {
    std::set<int> group;
    for (int other = 0; other < world; ++other) {
      bool same = true;
      for (int d = 0, a = rank, b = other; d < static_cast<int>(sizes.size()); ++d) {
        if (!in_group[d] && a % sizes[d] != b % sizes[d]) same = false;
        a /= sizes[d], b /= sizes[d];
      }
      if (same) group.insert(other);
    }
    groups.insert(group);
  }
  return groups;
}

// The Program's groups of `op` (of `kind`), as sets of global ranks (node x gpus per node +
// slot); all-reduces only those over the data-parallel replicas.
std::set<std::set<int>> program_groups(const Program& p, const ResolvedScenario& setup, Op op,
                                       GroupKind kind) {
  std::set<std::set<int>> groups;
  for (int32_t g = 0; g < p.num_groups(); ++g) {
    const auto members = p.members_of_group(g);
    const Instruction& first = p.instructions[members.front()];
    if (first.op != op || p.kind_of_group(g) != kind) continue;
    if (op == Op::kAllreduce && !first.data_parallel) continue;
    std::set<int> ranks;
    for (int32_t m : members) {
      const DeviceSpec& d = setup.cluster.devices[p.instructions[m].device];
      ranks.insert(d.node * setup.cluster.gpus_per_node + d.slot);
    }
    EXPECT_EQ(ranks.size(), members.size()) << "a GPU twice in one group";
    groups.insert(ranks);
  }
  return groups;
}

const std::vector<Layout> kLayouts = {
    {2, 1, 4, 4, 1, 2},  // EP across the tensor-parallel pair and two replicas
    {2, 1, 4, 8, 1, 1},  // every GPU its own experts: no expert-data parallelism
    {2, 1, 8, 4, 1, 1},  // four expert-data-parallel copies
    {1, 2, 4, 4, 1, 2},  // EP across the context-parallel pair
    {2, 2, 4, 4, 2, 1},  // experts split like the MLP, EP across context ranks and replicas
    {4, 1, 4, 2, 4, 1},  // experts split like the MLP, EP from the replicas (no folding)
    {2, 1, 2, 2, 2, 2},  // likewise with a pipeline
    // Expert groups inside one replica's tensor x context GPUs:
    {4, 1, 2, 2, 1, 1},  // EP 2 of the 4 tensor ranks: two groups per replica
    {4, 1, 2, 2, 1, 2},  // likewise with a pipeline
    {2, 4, 1, 4, 1, 1},  // EP 4: both tensor ranks of two context ranks
    {2, 4, 2, 2, 2, 1},  // experts split like the MLP, EP 2 of the 4 context ranks
    {4, 2, 2, 2, 1, 1},  // EP 2 of the tensor ranks, with context parallelism
};

TEST(ExpertFolding, GroupsAreMegatronCoresRankForRank) {
  for (const Layout& l : kLayouts) {
    SCOPED_TRACE(describe(l));
    const ResolvedScenario setup = folded_moe(l);
    const Program p = build_program(setup);
    const int edp = l.tp * l.cp * l.dp / (l.ep * l.etp);
    // Experts: order tp-ep-dp-pp over (ETP, EP, EDP, PP).
    const std::vector<int> expert_sizes = {l.etp, l.ep, edp, l.pp};
    EXPECT_EQ(program_groups(p, setup, Op::kAllToAll, GroupKind::kExpertExchange),
              megatron_groups(expert_sizes, {false, true, false, false}));
    const std::set<std::set<int>> expert_gradients =
        program_groups(p, setup, Op::kAllreduce, GroupKind::kExpertGradients);
    if (edp > 1) {
      EXPECT_EQ(expert_gradients, megatron_groups(expert_sizes, {false, false, true, false}));
    } else {
      EXPECT_TRUE(expert_gradients.empty());
    }
    // The attention's gradients: order tp-cp-dp-pp, reduced over DP x CP.
    EXPECT_EQ(program_groups(p, setup, Op::kAllreduce, GroupKind::kPlain),
              megatron_groups({l.tp, l.cp, l.dp, l.pp}, {false, true, true, false}));
  }
}

// The folding rule itself, by brute force over small layouts (TP, CP up to 4, DP up to 3, EP
// up to 8): a layout is accepted exactly when Megatron-Core's expert groups, and its groups of
// GPUs holding the same experts, are the ones ExpertGroupRuns describes (whole replicas, or
// runs of one replica's tensor and context ranks); every other layout whose groups divide the
// stage is refused as straddling.
TEST(ExpertFolding, AcceptsExactlyTheLayoutsWhoseGroupsTheRunsDescribe) {
  int accepted = 0, refused = 0;
  for (int tp = 1; tp <= 4; ++tp) {
    for (int cp = 1; cp <= 4; ++cp) {
      for (int dp = 1; dp <= 3; ++dp) {
        for (int ep = 2; ep <= 8; ++ep) {
          for (int etp : tp == 1 ? std::vector<int>{1} : std::vector<int>{1, tp}) {
            const int block = tp * cp, group = ep * etp;
            if (block * dp % group != 0) continue;
            const ExpertGroupRuns runs = expert_group_runs(ep, etp, tp, cp);
            const bool whole = group % block == 0;
            // Megatron-Core: L = t + T (c + C d) = e_t + ETP (e + EP edp).
            std::map<std::vector<int>, std::set<int>> by_exchange, by_holders, r_exchange,
                r_holders;
            for (int d = 0; d < dp; ++d) {
              for (int c = 0; c < cp; ++c) {
                for (int t = 0; t < tp; ++t) {
                  const int L = t + tp * (c + cp * d);
                  const int e_t = L % etp, e = L / etp % ep, edp = L / (etp * ep);
                  by_exchange[{e_t, edp}].insert(L);
                  by_holders[{e_t, e}].insert(L);
                  if (whole) {
                    const int replicas = group / block;
                    r_exchange[{d / replicas, runs.tensor_run(t)}].insert(L);
                    r_holders[{d % replicas, t, c}].insert(L);
                  } else {
                    r_exchange[{d, runs.tensor_run(t), runs.context_run(c)}].insert(L);
                    r_holders[{runs.tensor_slot(t), runs.context_slot(c)}].insert(L);
                  }
                }
              }
            }
            const auto partition = [](const std::map<std::vector<int>, std::set<int>>& by) {
              std::set<std::set<int>> groups;
              for (const auto& [key, members] : by) groups.insert(members);
              return groups;
            };
            const bool described = partition(by_exchange) == partition(r_exchange) &&
                                   partition(by_holders) == partition(r_holders);
            const bool fits = expert_folding(ep, etp, tp, cp, dp) == ExpertFoldingFit::kFits;
            EXPECT_EQ(fits, described) << describe({tp, cp, dp, ep, etp, 1});
            (fits ? accepted : refused) += 1;
          }
        }
      }
    }
  }
  EXPECT_GT(accepted, 100);
  EXPECT_GT(refused, 10);
}

// Each GPU holds 1 / (EP x ETP) of a block's experts (the cost model divides what a layer
// keeps by TP afterwards), and with whole experts per GPU a block keeps only its attention's
// tensor-parallel collectives.
TEST(ExpertFolding, EachGpuHoldsItsShareOfTheExperts) {
  for (const Layout& l : kLayouts) {
    SCOPED_TRACE(describe(l));
    const ResolvedScenario folded = folded_moe(l);
    const ResolvedScenario dense = folded_moe({l.tp, l.cp, l.dp, 1, l.tp, l.pp});
    int moe_layers = 0;
    for (size_t i = 0; i < dense.model.layers.size(); ++i) {
      const ModelLayer& before = dense.model.layers[i];
      const ModelLayer& after = folded.model.layers[i];
      const double experts = static_cast<double>(before.moe.expert_parameter_bytes);
      if (experts == 0) continue;
      ++moe_layers;
      const double kept = experts * l.tp / (l.ep * l.etp);
      EXPECT_NEAR(static_cast<double>(before.parameter_bytes - after.parameter_bytes),
                  experts - kept, 1);
      const int collectives = l.tp > 1 && l.etp == 1 ? 1 : 2;
      EXPECT_EQ(after.tp_fwd_collectives, collectives);
      EXPECT_EQ(after.tp_bwd_collectives, collectives);
    }
    EXPECT_EQ(moe_layers, 8);
  }
}

const std::vector<std::string> kFreeLinks = {
    "cluster.intra_node.bandwidth_gbytes_per_s=1e12", "cluster.intra_node.latency_us=0",
    "cluster.inter_node.bandwidth_gbytes_per_s=1e12", "cluster.inter_node.latency_us=0",
    "cluster.collectives.model=TEXTBOOK"};

// At a flat efficiency and with links that cost nothing, folding changes no step.
TEST(ExpertFolding, FreeLinksMakeFoldingCostNothing) {
  for (const Layout& l : kLayouts) {
    SCOPED_TRACE(describe(l));
    const ResolvedScenario folded = folded_moe(l, kFreeLinks);
    const ResolvedScenario dense = folded_moe({l.tp, l.cp, l.dp, 1, l.tp, l.pp}, kFreeLinks);
    const Program a = build_program(folded), b = build_program(dense);
    EXPECT_NEAR(run_analytic(a, folded.cluster).span_s(), run_analytic(b, dense.cluster).span_s(),
                1e-9);
  }
}

// The scenario's dispatcher reaches the Program: HYBRIDEP moves DeepEP's bytes; the node limit
// is DeepEP's and HybridEP's only.
TEST(ExpertFolding, DispatchersReachTheProgram) {
  const Layout l{2, 1, 4, 4, 1, 2};
  const std::vector<std::pair<std::string, ExpertDispatch::Kind>> kinds = {
      {"ALLTOALL", ExpertDispatch::Kind::kAllToAll},
      {"ALLGATHER", ExpertDispatch::Kind::kAllGather},
      {"DEEPEP", ExpertDispatch::Kind::kDeepEp},
      {"HYBRIDEP", ExpertDispatch::Kind::kDeepEp}};
  for (const auto& [name, kind] : kinds) {
    const ResolvedScenario setup = folded_moe(l, {"model.zoo.moe.dispatcher=" + name});
    EXPECT_EQ(setup.expert_dispatch.kind, kind) << name;
    EXPECT_EQ(setup.expert_dispatch.top_k, 2);
    EXPECT_EQ(setup.expert_dispatch.experts, 16);
    EXPECT_EQ(build_program(setup).expert_dispatch.kind, kind) << name;
  }
  EXPECT_EQ(
      folded_moe(l, {"model.zoo.moe.dispatcher=HYBRIDEP", "model.zoo.moe.max_nodes_per_token=2"})
          .expert_dispatch.max_nodes_per_token,
      2);
  EXPECT_THROW(folded_moe(l, {"model.zoo.moe.max_nodes_per_token=2"}), InputError);
}

TEST(ExpertFolding, SimgridReproducesAnalyticTimesOnRandomFoldedLayouts) {
  std::mt19937 rng(4111);
  int trials = 0;
  while (trials < 8) {
    const auto pick = [&](std::vector<int> v) {
      return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)];
    };
    Layout l{pick({1, 2, 4}), pick({1, 2, 4}), pick({1, 2, 4}), pick({2, 4, 8, 16}), 1,
             pick({1, 2})};
    l.etp = pick({1, l.tp});
    if (expert_folding(l.ep, l.etp, l.tp, l.cp, l.dp) != ExpertFoldingFit::kFits ||
        l.tp * l.cp * l.dp * l.pp > 32) {
      continue;
    }
    ++trials;
    SCOPED_TRACE(describe(l));
    const char* const dispatchers[] = {"ALLTOALL", "ALLGATHER", "DEEPEP"};
    const char* dispatcher = dispatchers[pick({0, 1, 2})];
    SCOPED_TRACE(dispatcher);
    ResolvedScenario setup = folded_moe(
        l, {"training.microbatches=2", std::string("model.zoo.moe.dispatcher=") + dispatcher});
    testing::expect_exact_simgrid_equals_analytic(setup);
  }
}

}  // namespace
}  // namespace pipetwin
