#include "sim/schedule/lowering_updates.h"

#include <map>
#include <tuple>
#include <utility>

namespace pipetwin {

void add_updates(const LoweringContext& context, const std::vector<UpdateSlot>& updates,
                 ProgramBuilder& builder) {
  const PipelineLayout& layout = context.layout();
  // Keyed by the update's collective and, for experts, the replicas' place in their expert
  // group (-1 for the dense gradients, which every replica sums).
  std::map<std::tuple<int32_t, int32_t, int32_t>, std::vector<int32_t>> collectives;
  const auto reduce = [&](const UpdateSlot& u, int64_t bytes, int32_t group) {
    Instruction allreduce = u.instruction;
    allreduce.op = Op::kAllreduce;
    allreduce.data_parallel = true;
    allreduce.compute_s = 0;
    allreduce.bytes = bytes;
    const int32_t id = builder.add(allreduce);
    builder.add_dependency(id, u.gradients);
    builder.add_dependency(u.optim, id);
    collectives[{u.collective.first, u.collective.second, group}].push_back(id);
  };
  for (const UpdateSlot& u : updates) {
    const int32_t s = u.instruction.stage;
    // Context parallelism's C GPUs of each device hold the same weights too.
    const int32_t holders = layout.replicas * layout.context_parallel *
                            context.stage_replicas().replicas(s) * context.copies(s);
    const StageCost& cost = layout.costs[s];
    // Expert parallelism: each expert's gradient already holds every token routed to it;
    // it sums over the replicas holding the same experts (and DualPipe's copies) only.
    const int32_t expert_holders =
        holders / (layout.replicas * layout.context_parallel) * layout.expert_data_parallel;
    const int64_t experts = layout.expert_parallel > 1 ? cost.expert_gradient_bytes : 0;
    const int64_t dense = cost.gradient_bytes - experts;
    bool reduced = false;
    if (holders > 1 && dense > 0) {
      reduce(u, dense, -1);
      reduced = true;
    }
    if (expert_holders > 1 && experts > 0) {
      const int32_t replica = u.instruction.device / layout.devices_per_replica;
      reduce(u, experts, replica % layout.expert_group_replicas);
      reduced = true;
    }
    if (!reduced && u.waits_for_gradients) builder.add_dependency(u.optim, u.gradients);
  }
  for (const auto& [key, members] : collectives) {
    builder.group(members, std::get<2>(key) >= 0 ? GroupKind::kExpertGradients : GroupKind::kPlain);
  }
}

}  // namespace pipetwin
