// What the ranks of a measured run execute: the scenario's iterations after some warm-up
// ones, which are left out of everything reported but the losses.
#pragma once

#include <cstdint>

#include "sim/program/program.h"
#include "sim/spec/resolved_scenario.h"

namespace pipetwin {

struct RunPlan {
  ResolvedScenario setup;      // as the scenario says: the iterations reported
  ResolvedScenario run_setup;  // training.iterations + warmup: the iterations run
  Program run_program;         // run_setup's Program
  int32_t warmup = 0;
};

// The warm-up iterations to run: `warmup`, except that FreezePipe runs and freeze logs
// depend on every iteration and so run none; an explicit (`given`) warm-up above 0 is then
// refused with InputError.
int32_t effective_warmup(const ResolvedScenario& setup, int32_t warmup, bool given,
                         bool writes_freeze_log);

RunPlan plan_run(const ResolvedScenario& setup, int32_t warmup);

// The Program as memory_curve sees it, without the warm-up iterations' allocations: the
// memory of the kept iterations alone, as a simulation of them accounts it.
Program without_warmup_allocations(Program program, int32_t warmup);

}  // namespace pipetwin
