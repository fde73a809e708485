// Lowering's updates pass: every OPTIM that the compute pass placed waits for the gradients
// it applies. Where several devices hold the same weights (data-parallel replicas of the
// pipeline, a stage's own replicas, DualPipe's two copies of a model stage) and the stage
// has gradients, they first go through an ALLREDUCE on the collective lane, one collective
// over all those devices; otherwise the OPTIM waits for its backward directly (when the
// lane order does not already put it after it).
#pragma once

#include <vector>

#include "sim/program/program.h"
#include "sim/schedule/lowering_context.h"

namespace pipetwin {

void add_updates(const LoweringContext& context, const std::vector<UpdateSlot>& updates,
                 ProgramBuilder& builder);

}  // namespace pipetwin
