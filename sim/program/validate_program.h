// Rejects a Program that could not run correctly, naming the offending instruction:
// unmatched or mismatched transfers, a stage whose ranges do not cover the minibatch
// exactly once per direction and iteration, dependencies out of range, and cycles
// (including rendezvous deadlocks). A bad program is never executed.
#pragma once

#include "sim/program/program.h"

namespace pipetwin {

// Throws InputError describing the first problem found.
void validate_program(const Program& program);

// The same checks but the coverage of the minibatch, for Programs that no schedule lowered
// (read from Chakra traces of other tools, whose nodes have no stages or sample ranges).
void validate_program_graph(const Program& program);

}  // namespace pipetwin
