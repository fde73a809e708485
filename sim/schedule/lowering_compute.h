// Lowering's first pass: every compute lane of the Program, in the schedule's order. Each
// FWD and BWD (or BWD_INPUT and BWD_WEIGHT) gets its samples, its duration on its device and
// the stash it allocates or frees; each weight update gets its OPTIM where the schedule puts
// it. Nothing is wired yet: the later passes add what the ops wait for (lowering.h).
#pragma once

#include <cstdint>

#include "sim/program/program.h"
#include "sim/schedule/async_order.h"
#include "sim/schedule/lowering_context.h"

namespace pipetwin {

// Synchronous schedules: every replica runs `order` once per iteration, and each iteration
// ends with one OPTIM per stage on every device that runs it, model stage by model stage.
LoweredCompute add_compute(const LoweringContext& context, const ComputeOrder& order,
                           int32_t iterations, ProgramBuilder& builder);

// Asynchronous pipelines: every replica runs `run`, OPTIMs in place. An OPTIM applies the
// gradients of the BWD it follows; with update_every_microbatch it covers that microbatch's
// samples, otherwise the replica's whole slice of the batch.
LoweredCompute add_compute_run(const LoweringContext& context, const RunOrder& run,
                               int32_t iterations, bool update_every_microbatch,
                               ProgramBuilder& builder);

}  // namespace pipetwin
