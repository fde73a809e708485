#include "sim/schedule/device_speeds.h"

namespace pipetwin {

void apply_device_speeds(Program& program, std::span<const double> stage_priced_speed,
                         std::span<const double> device_speed) {
  for (Instruction& instr : program.instructions) {
    const bool compute = is_pass(instr.op) || instr.op == Op::kOptim;
    if (!compute && !instr.starts_under_compute()) continue;
    if (instr.stage < 0 || instr.stage >= static_cast<int32_t>(stage_priced_speed.size())) continue;
    const double factor = stage_priced_speed[instr.stage] / device_speed[instr.device];
    if (factor == 1) continue;
    instr.compute_s *= factor;
    instr.lead_s *= factor;
  }
}

}  // namespace pipetwin
