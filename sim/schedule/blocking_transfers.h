// Blocking point-to-point (schedule.comm_overlap = false): transfers occupy the compute
// lane, as DeepSpeed's blocking p2p does, instead of overlapping compute on their own
// send/recv lanes.
#pragma once

#include "sim/program/program.h"

namespace pipetwin {

// Adds, on every device, the data dependencies that make each point-to-point transfer
// (SEND_*/RECV_* of activations, gradients, stashes and weights; not ALLREDUCE, not the
// OFFLOAD/RELOAD copies, not MIGRATE) hold the compute lane from its issue point until it
// ends:
//  * a SEND is issued right after its producer (the latest compute instruction of its
//    device it depends on; the lane's start when none): the next compute instruction
//    waits for it;
//  * a RECV is issued right before its consumer (the first compute instruction of its
//    device that depends on it; the lane's end when none): it waits for the compute
//    instruction before that consumer.
// Transfers issued at the same point run together (each on its own lane), and transfers
// get no dependencies on each other beyond the rendezvous with their partner: a SEND
// waiting for its RECV does not stop a RECV at the same point, which is what keeps
// blocking pipelines free of the classic send/send deadlock. Each send and recv lane is
// put in issue-point order (PipeFB posts its receives in another order).
//
// Where receiving right before the consumer still deadlocks (Megatron's interleaved
// order: two devices each blocked in a send that the other receives only after its next
// compute op), every receive is posted one compute op earlier, then two, ..., until the
// program runs: Megatron's batched send/recv, which posts the next input's receive with
// the previous output's send. Throws InputError if no depth works.
//
// Ids of transfers may change (lanes are reordered); existing dependencies keep their
// order (the LibTorch backend reads a SEND's producer as its last dependency, and SENDs
// gain none).
void block_compute_on_transfers(Program& program);

}  // namespace pipetwin
