// The fast evaluator prices a stage's expert all-to-alls and its routed experts' gradient
// reduction on the GPUs GpuNumbering names: the same GPUs as the Program's groups, for expert
// groups of whole replicas and inside one replica (MoE parallel folding).
#include "sim/tune/gpu_numbering.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "folded_moe.h"
#include "sim/driver/build_program.h"

namespace pipetwin {
namespace {

using Layout = testing::FoldedLayout;

// The devices of the Program's group of `kind` that holds device 0.
std::set<int32_t> program_group_of_gpu0(const Program& p, GroupKind kind) {
  for (int32_t g = 0; g < p.num_groups(); ++g) {
    if (p.kind_of_group(g) != kind) continue;
    std::set<int32_t> devices;
    for (int32_t m : p.members_of_group(g)) devices.insert(p.instructions[m].device);
    if (devices.count(0) > 0) return devices;
  }
  return {};
}

TEST(GpuNumbering, ExpertGroupsAreTheProgramsOnWholeAndSplitReplicas) {
  const std::vector<Layout> layouts = {
      {2, 1, 4, 4, 1, 2},  // whole replicas: the tensor pair of two replicas
      {2, 2, 4, 4, 2, 1},  // whole replicas, experts split like the MLP
      {4, 1, 2, 2, 1, 2},  // two tensor ranks of one replica
      {2, 4, 2, 4, 1, 1},  // both tensor ranks of two context ranks
      {2, 4, 2, 2, 2, 1},  // experts split like the MLP over two of the four context ranks
  };
  for (const Layout& l : layouts) {
    SCOPED_TRACE(testing::describe(l));
    const ResolvedScenario setup = testing::folded_moe(l);
    const Program p = build_program(setup);
    const TrainingSpec& t = setup.training;
    const GpuNumbering numbering{t.tensor_parallel, t.context_parallel, l.pp};
    const std::vector<int32_t> group =
        numbering.expert_group(0, t.expert_group_replicas(), t.expert_runs());
    EXPECT_EQ(std::set<int32_t>(group.begin(), group.end()),
              program_group_of_gpu0(p, GroupKind::kExpertExchange));
    EXPECT_EQ(static_cast<int>(group.size()), l.ep);
    const std::vector<int32_t> holders =
        numbering.expert_holders(0, t.expert_group_replicas(), t.data_parallel, t.expert_runs());
    EXPECT_EQ(std::set<int32_t>(holders.begin(), holders.end()),
              program_group_of_gpu0(p, GroupKind::kExpertGradients));
    EXPECT_EQ(static_cast<int32_t>(holders.size()), t.expert_data_parallel());
  }
}

}  // namespace
}  // namespace pipetwin
