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
  // A collective waits for collectives of its own device only, on its own lane or on the
  // collective lane before its data-parallel lane (a gradient reduction after an expert
  // all-to-all), and a lane lists its collectives in order: in id order, one a collective
  // waits for comes first.
  for (int32_t i = 0; i < program.size(); ++i) {
    if (!is_collective(program.instructions[i].op)) continue;
    for (int32_t d : program.deps_of(i)) {
      trigger[i] = std::max(trigger[i], position[d] >= 0 ? position[d] : trigger[d]);
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
