// A kernel-level trace (a PyTorch profiler import: one span per GPU kernel) as passes: the
// kernels, copies and sets of one annotated forward, backward or optimizer step of a microbatch
// become one span on the compute lane, from the first one's start to the last one's end, as pipetwin's own timelines hold a
// pass. That is what `calibrate --from` fits a pass's cost to and what `compare` pairs with a
// simulated pass. Every other span (collectives, copies, kernels no annotation names) is kept
// as it was.
#pragma once

#include "traces/timeline.h"

namespace pipetwin {

Timeline passes_of(const Timeline& kernels);

}  // namespace pipetwin
