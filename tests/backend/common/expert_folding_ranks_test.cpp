// The real ranks' expert groups (backend/common/expert_folding_ranks.h) are the simulator's,
// device for device: the expert all-to-all groups of the Program, which
// tests/sim/schedule/expert_folding_test.cpp holds against Megatron-Core's rank generator, and
// each expert-gradient group the ranks with the same experts, one of each copy.
#include "backend/common/expert_folding_ranks.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "sim/driver/build_program.h"
#include "sim/scenario/loaded_scenario.h"
#include "sim/scenario/resolve_scenario.h"

namespace pipetwin {
namespace {

struct Layout {
  int tp, dp, ep, etp, pp;
};

ResolvedScenario folded_moe(const Layout& l) {
  const std::string text = R"(
    cluster { preset: "dgx-h100" nodes: 4 }
    model { zoo { name: "transformer" layers: 8 hidden: 512 heads: 8 kv_heads: 8 ffn_hidden: 1024
                  seq_len: 256 vocab: 1000 efficiency: 0.5
                  moe { experts: 16 top_k: 2 expert_ffn_hidden: 512 } } }
    training { global_batch: 64 microbatches: 4 sequence_parallel: true }
    schedule { kind: ONE_F_ONE_B stages: 1 }
  )";
  const std::vector<std::string> overrides = {
      "schedule.stages=" + std::to_string(l.pp), "training.tensor_parallel=" + std::to_string(l.tp),
      "training.data_parallel=" + std::to_string(l.dp),
      "training.expert_parallel=" + std::to_string(l.ep),
      "training.expert_tensor_parallel=" + std::to_string(l.etp)};
  return resolve_scenario(parse_scenario(text, "folded.textproto", "", false, overrides));
}

// The device sets of the Program's groups of `kind`.
std::set<std::set<int>> device_groups(const Program& p, GroupKind kind) {
  std::set<std::set<int>> groups;
  for (int32_t g = 0; g < p.num_groups(); ++g) {
    if (p.kind_of_group(g) != kind) continue;
    std::set<int> devices;
    for (int32_t m : p.members_of_group(g)) devices.insert(p.instructions[m].device);
    groups.insert(devices);
  }
  return groups;
}

TEST(ExpertFoldingRanks, AreTheSimulatorsGroups) {
  const std::vector<Layout> layouts = {
      {2, 4, 4, 1, 2},  // EP across the tensor-parallel pair and two replicas
      {2, 4, 8, 1, 1},  // every rank its own experts
      {2, 8, 4, 1, 1},  // four copies of each expert group
      {2, 2, 2, 1, 2},  // EP over the tensor-parallel pair, two copies
      {4, 4, 2, 4, 1},  // experts split like the MLP: EP from the replicas
      {2, 2, 2, 2, 2},  // likewise with a pipeline
      {4, 2, 2, 1, 1},  // expert groups inside a replica: EP 2 of the 4 tensor ranks
      {4, 2, 2, 1, 2},  // likewise with a pipeline
  };
  for (const Layout& l : layouts) {
    SCOPED_TRACE("TP " + std::to_string(l.tp) + " DP " + std::to_string(l.dp) + " EP " +
                 std::to_string(l.ep) + " ETP " + std::to_string(l.etp) + " PP " +
                 std::to_string(l.pp));
    const Program p = build_program(folded_moe(l));
    const ExpertFolding folding{l.tp, l.ep, l.etp, l.tp * l.pp};
    std::set<std::set<int>> exchanges;
    std::set<std::set<int>> copies;  // ranks holding the same experts
    for (int rank = 0; rank < p.num_devices; ++rank) {
      const std::vector<int> group = expert_parallel_ranks(rank, folding);
      ASSERT_EQ(static_cast<int>(group.size()), l.ep);
      EXPECT_EQ(group[expert_place(rank, folding).expert_rank], rank);
      exchanges.insert(std::set<int>(group.begin(), group.end()));
      std::set<int> same;
      for (int other = 0; other < p.num_devices; ++other) {
        const bool same_stage = other % (l.tp * l.pp) / l.tp == rank % (l.tp * l.pp) / l.tp;
        const bool same_split = other % l.etp == rank % l.etp;
        if (same_stage && same_split &&
            expert_place(other, folding).expert_rank == expert_place(rank, folding).expert_rank) {
          same.insert(other);
        }
      }
      if (same.size() > 1) copies.insert(same);
    }
    EXPECT_EQ(exchanges, device_groups(p, GroupKind::kExpertExchange));
    EXPECT_EQ(copies, device_groups(p, GroupKind::kExpertGradients));
  }
}

}  // namespace
}  // namespace pipetwin
