#include "backend/run/run_plan.h"

#include <string>

#include "sim/driver/build_program.h"
#include "sim/spec/errors.h"

namespace pipetwin {

int32_t effective_warmup(const ResolvedScenario& setup, int32_t warmup, bool given,
                         bool writes_freeze_log) {
  if (!setup.freeze.enabled && !writes_freeze_log) return warmup;
  if (given && warmup > 0) {
    throw InputError("--warmup " + std::to_string(warmup) + ": " +
                     (setup.freeze.enabled
                          ? "a FreezePipe run keeps every iteration, since its freezing depends "
                            "on them"
                          : "--freeze-log records every iteration's gradients") +
                     " (give --warmup 0 or leave it out)");
  }
  return 0;
}

RunPlan plan_run(const ResolvedScenario& setup, int32_t warmup) {
  RunPlan plan;
  plan.setup = setup;
  plan.run_setup = setup;
  plan.run_setup.training.iterations += warmup;
  plan.run_program = build_program(plan.run_setup);
  plan.warmup = warmup;
  return plan;
}

Program without_warmup_allocations(Program program, int32_t warmup) {
  for (Instruction& ins : program.instructions) {
    if (ins.iteration >= warmup) continue;
    ins.stash_bytes = 0;
    if (is_transfer(ins.op) || is_copy(ins.op)) ins.bytes = 0;
  }
  return program;
}

}  // namespace pipetwin
