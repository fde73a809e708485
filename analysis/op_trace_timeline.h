// A measured Megatron op timeline (analysis/op_trace.h) as a pipetwin Timeline, so that
// `compare`, `report` and `calibrate --from` read it like a run pipetwin measured: a device per
// rank (data-parallel rank x pipeline size + stage), each op on its lane as a Program op
// (forward-compute FWD, backward-compute BWD, forward-send SEND_ACT, ..., grads-reduce-scatter
// REDUCE_SCATTER, params-all-gather ALL_GATHER, the other all-reduces ALLREDUCE, optimizer
// OPTIM), with its stage, microbatch and step (the iteration, counted from the trace's first).
// Ops without a Program counterpart (gc) keep their name and an empty op: unmatched time. The
// trace's steps (often a sample of a longer run) are placed back to back.
#pragma once

#include "analysis/op_trace.h"
#include "traces/timeline.h"

namespace pipetwin {

Timeline timeline_from_op_trace(const OpTrace& trace);

}  // namespace pipetwin
