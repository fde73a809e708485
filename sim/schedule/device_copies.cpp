#include "sim/schedule/device_copies.h"

namespace pipetwin {

DeviceCopies::DeviceCopies(const Program& program, int32_t k, ProgramBuilder& builder)
    : program_(program), k_(k), id_(static_cast<size_t>(program.size()) * k, -1) {
  for (int32_t i = 0; i < program.size(); ++i) {
    if (is_collective(program.instructions[i].op)) continue;
    for (int32_t j = 0; j < k_; ++j) at(i, j) = builder.add(place(program.instructions[i], j));
  }
}

Program DeviceCopies::finish(ProgramBuilder builder) const {
  std::vector<int64_t> resident;
  for (int64_t bytes : program_.static_bytes) resident.insert(resident.end(), k_, bytes);
  std::vector<int32_t> stage_device;
  for (int32_t d : program_.stage_device) stage_device.push_back(d * k_);
  builder.set_static_bytes(std::move(resident));
  builder.set_stage_device(std::move(stage_device));
  builder.set_model_stage(program_.model_stage);
  builder.set_show_ranges(program_.show_ranges);
  return std::move(builder).finish();
}

}  // namespace pipetwin
