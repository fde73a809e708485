// PipeFB (master's thesis "Optimization of Memory and Communication for the Pipeline
// Parallelism", 2023): each stage's forward runs on one device and its backward on
// another, so that no device holds both the activation stash and the backward's working
// set (gradients, optimizer state).
//
// Stage s: forward device 2s, backward device 2s + 1 (neighbours, so the stash crosses
// the fastest link). The forward device streams FWDs: it sends activations to the next
// forward device and each FWD's stash to its backward device (SEND_STASH; the stash is
// freed there when the send ends). The backward device runs the BWDs and the OPTIM and
// sends the updated weights back (SEND_WEIGHTS), which the next iteration's first FWD
// waits for. Resident memory: the forward device keeps only the weights; the backward
// device weights, gradients and optimizer state. The last stage's backward device
// computes the loss.
//
// In flight: the backward device receives stash n once backward n - W_s has ended, and a
// forward waits until the previous stash has left, so the forward device holds one stash
// and the backward device W_s. Unlike 1F1B (K - s), the backward device spends only t_b
// per microbatch, so covering a microbatch's round trip (forwards of stages s..K-1,
// backwards of K-1..s) takes W_s = ceil(sum of t_f + t_b from stage s on / t_b(s)). The
// backward device's recv lane takes stashes and gradients in the order the contention-free
// schedule delivers them. Every dependency is local to a device (or a transfer), so real
// ranks run the Program as it is.
#pragma once

#include "sim/program/program.h"
#include "sim/schedule/lowering.h"
#include "sim/spec/resolved_scenario.h"

namespace pipetwin {

// `layout` as make_layout gives it for `stages` chunks on one replica. With `recompute`,
// SEND_STASH carries the stage's input (the previous stage's output; 0 bytes for stage 0,
// whose backward device can read the minibatch itself, though real ranks send it) and each
// BWD also pays its FWD's time; the forward device keeps the input until it has left. (The
// activations recomputed inside a BWD live only while it runs; the memory model counts the received
// input.)
Program pipefb_program(const PipelineLayout& layout, bool recompute, int32_t iterations);

}  // namespace pipetwin
