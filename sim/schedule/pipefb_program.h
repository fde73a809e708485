// PipeFB (master's thesis "Optimization of Memory and Communication for the Pipeline
// Parallelism", 2023): each stage's forward runs on one device and its backward on
// another, so that no device holds both the activation stash and the backward's working
// set (gradients, optimizer state).
//
// Stage s: forward device 2s, backward device 2s + 1 (neighbours, so the stash crosses
// the fastest link). The forward device streams FWDs: it sends activations to the next
// forward device and each FWD's stash to its backward device (SEND_STASH; its stash is
// freed when the send ends, and a FWD waits until the previous stash has left, so a
// forward device holds at most two). The backward device receives stashes and gradients
// in 1F1B's pattern (K - s stashes, then one gradient per stash), so it keeps at most
// K - s stashes, runs the BWDs and the OPTIM, and sends the updated weights back
// (SEND_WEIGHTS), which the next iteration's first FWD waits for. Resident memory: the
// forward device keeps only the weights; the backward device weights, gradients and
// optimizer state. The last stage's backward device computes the loss.
#pragma once

#include "sim/program/program.h"
#include "sim/scenario/resolved_scenario.h"
#include "sim/schedule/lowering.h"

namespace pipetwin {

// `layout` as make_layout gives it for `stages` chunks on one replica. With `recompute`,
// SEND_STASH carries the stage's input (the previous stage's output; stage 0's backward
// device reads the minibatch itself, so nothing for it) and each BWD also pays its FWD's
// time; the forward device keeps the input until it has left. (The activations recomputed
// inside a BWD live only while it runs; the memory model counts the received input.)
Program pipefb_program(const PipelineLayout& layout, bool recompute, int32_t iterations);

}  // namespace pipetwin
