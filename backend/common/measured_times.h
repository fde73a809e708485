// Turning what the ranks of a real run measured into the Program's ExecutionTimes, the
// same way for every real backend (LibTorch on CPU, the CUDA replay).
#pragma once

#include "sim/exec/execution_times.h"
#include "sim/program/program.h"

namespace pipetwin {

// A transfer is a rendezvous: it starts when both ends have been posted and ends when the
// data has arrived. Each rank saw only its own end, so both ends get the pair's start and
// end, as the simulators record them: the later of the two posts (never after the end),
// and the RECV's end (the SEND may return later, when the transport acknowledges; clock
// offsets are only estimates). A RECV posted early waits; that wait is idle, not transfer.
void pair_transfer_times(const Program& program, ExecutionTimes& times);

}  // namespace pipetwin
