#include "sim/schedule/collective_triggers.h"

#include <algorithm>

namespace pipetwin {

std::vector<int32_t> compute_positions(const Program& program) {
  std::vector<int32_t> position(program.size(), -1);
  for (int32_t d = 0; d < program.num_devices; ++d) {
    const int32_t lane = d * kLaneCount + static_cast<int>(Lane::kCompute);
    for (int32_t i = program.lane_begin[lane]; i < program.lane_begin[lane + 1]; ++i) {
      position[i] = i - program.lane_begin[lane];
    }
  }
  return position;
}

std::vector<int32_t> collective_triggers(const Program& program,
                                         const std::vector<int32_t>& position) {
  std::vector<int32_t> trigger(program.size(), -1);
  // A device's collective lane comes before its data-parallel lane, and each lists its
  // collectives in order, so a collective that another waits for on its own device comes
  // first; one on another device may not, and is resolved on its own first.
  std::vector<uint8_t> done(program.size(), 0);
  std::vector<int32_t> stack;
  for (int32_t root = 0; root < program.size(); ++root) {
    if (done[root] || !is_collective(program.instructions[root].op)) continue;
    stack.push_back(root);
    while (!stack.empty()) {
      const int32_t i = stack.back();
      bool ready = true;
      for (int32_t d : program.deps_of(i)) {
        if (position[d] < 0 && !done[d] && is_collective(program.instructions[d].op)) {
          stack.push_back(d);
          ready = false;
        }
      }
      if (!ready) continue;
      stack.pop_back();
      if (done[i]) continue;
      for (int32_t d : program.deps_of(i)) {
        trigger[i] = std::max(trigger[i], position[d] >= 0 ? position[d] : trigger[d]);
      }
      done[i] = 1;
    }
  }
  return trigger;
}

Program finish_like(const Program& source, ProgramBuilder builder) {
  builder.set_static_bytes(source.static_bytes);
  builder.set_stage_device(source.stage_device);
  builder.set_stage_replicas(source.stage_replicas);
  builder.set_model_stage(source.model_stage);
  builder.set_show_ranges(source.show_ranges);
  builder.set_tensor_parallel(source.tensor_parallel);
  builder.set_context_parallel(source.context_parallel);
  return std::move(builder).finish();
}

}  // namespace pipetwin
