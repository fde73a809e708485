// Sample ranges for a measured run's spans that name their microbatch but not its samples.
// Traces of other frameworks' jobs (Megatron's op timers, PyTorch profiler annotations)
// count microbatches, not samples; pipetwin's spans carry the samples they train on, which
// the fit prices a pass by and `compare` pairs spans by. Each such span gets the range the
// scenario's own Program gives that stage's microbatch (replica r's m-th microbatch: the
// stage's m-th range on r's slice of the batch).
#pragma once

#include "sim/spec/resolved_scenario.h"
#include "traces/timeline.h"

namespace pipetwin {

// Fills the range of every FWD, BWD, SEND_* and RECV_* span whose range is empty and whose
// microbatch and stage are the scenario's (a microbatch numbered within its replica becomes
// pipetwin's index across them; a span without a stage takes its device's, where the device
// runs one chunk), and of every OPTIM and data-parallel collective
// without one (its device's replica's slice, as the Program's); returns how
// many it filled. Spans with a range keep it.
int32_t assign_sample_ranges(const ResolvedScenario& setup, Timeline& timeline);

}  // namespace pipetwin
