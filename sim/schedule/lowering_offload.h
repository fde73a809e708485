// Lowering's offload pass: the copies to host memory and back, on each device's copy lane.
//
// Activations (PipelineLayout::offload_fraction): an OFFLOAD of that fraction of the stash
// follows each offloaded FWD. The RELOAD of forward f is issued when the stage's backward h
// places before the first BWD that needs f starts, i.e. when the compute op before that
// backward ends (h = prefetch_horizon, counted in the stage's backward order; the stage's
// first BWD when there is none that early): it then copies while h backwards run, and with
// h = 0 not at all. Every BWD of f's samples waits for that RELOAD. A forward whose RELOAD
// would be due as soon as it ends (the last h forwards before a backward, e.g. on 1F1B's
// last stage) keeps its stash: the round trip could only delay the backward.
//
// Weight stashes of asynchronous pipelines (offload_weight_stashes): when a BWD after an
// OPTIM still needs the version that OPTIM overwrites, an OFFLOAD_WEIGHTS copies that
// version out (issued when the previous OPTIM of the stage ends, or at the start) and the
// OPTIM waits for it; its RELOAD_WEIGHTS is issued h backwards of the stage ahead of the
// first BWD that needs it, but not before the OPTIM ends, and every such BWD waits for it.
//
// The copy lane holds the copies in the compute-lane order of what triggers them.
#pragma once

#include "sim/program/program.h"
#include "sim/schedule/lowering_context.h"

namespace pipetwin {

// Each of compute.lanes is placed on its own: an iteration (lower) or the whole run with
// its OPTIMs (lower_run). Adds nothing when the layout offloads nothing.
void add_offload(const LoweringContext& context, const LoweredCompute& compute,
                 ProgramBuilder& builder);

}  // namespace pipetwin
