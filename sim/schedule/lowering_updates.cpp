#include "sim/schedule/lowering_updates.h"

#include <map>
#include <utility>

namespace pipetwin {

void add_updates(const LoweringContext& context, const std::vector<UpdateSlot>& updates,
                 ProgramBuilder& builder) {
  const PipelineLayout& layout = context.layout();
  std::map<std::pair<int32_t, int32_t>, std::vector<int32_t>> collectives;
  for (const UpdateSlot& u : updates) {
    const int32_t s = u.instruction.stage;
    const int32_t holders =
        layout.replicas * context.stage_replicas().replicas(s) * context.copies(s);
    if (holders > 1 && layout.costs[s].gradient_bytes > 0) {
      Instruction reduce = u.instruction;
      reduce.op = Op::kAllreduce;
      reduce.compute_s = 0;
      reduce.bytes = layout.costs[s].gradient_bytes;
      const int32_t allreduce = builder.add(reduce);
      builder.add_dependency(allreduce, u.gradients);
      builder.add_dependency(u.optim, allreduce);
      collectives[u.collective].push_back(allreduce);
    } else if (u.waits_for_gradients) {
      builder.add_dependency(u.optim, u.gradients);
    }
  }
  for (const auto& [key, members] : collectives) builder.group(members);
}

}  // namespace pipetwin
