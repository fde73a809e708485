// The physical-GPU replay of a Program (run on the device by backend/cuda): what each of a rank's
// instructions becomes on the device, sized from the cost model, with the events that
// order its lanes. Plain C++ so that the mapping, the sizing and the event dependencies are
// tested on machines without a GPU; backend/cuda only carries the plan out.
//
//   FWD, BWD, OPTIM      compute stream: a GEMM of the op's FLOPs (FLOP-counted models:
//                        FLOPs = compute_s x the device's peak x the model's efficiency),
//                        or a kernel that spins for compute_s (models given in time)
//   SEND_*, MIGRATE      send stream: ncclSend of the op's bytes to the peer
//   RECV_*, MIGRATE_RECV recv stream: ncclRecv of the op's bytes from the peer
//   OFFLOAD / RELOAD     copy stream: cudaMemcpyAsync to / from pinned host memory
//   ALLREDUCE            collective stream: ncclAllReduce of the op's bytes in its group
//
// A FWD allocates its stash when it starts, its BWD frees it when it ends (real
// cudaMalloc'd buffers), so memory pressure is real.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backend/replay/replay_ops.h"
#include "sim/program/program.h"

namespace pipetwin {

// The rank's instructions as device operations. Throws std::invalid_argument when a
// dependency crosses ranks other than through a SEND/RECV pair (the device could not wait
// for it), naming the instruction.
ReplayPlan make_replay_plan(const Program& program, int32_t rank, const ReplaySizing& sizing);

// GEMMs whose repeats x 2 m n k is `flops` to within four steps of k per repeat: square
// m = n up to `max_side`, 8 <= k <= max_side, all multiples of 8, as many repeats as that
// takes. A layer's
// GEMMs have shapes like these (k a hidden size); one GEMM with k in the tens of
// thousands would stream its operands from memory and run far below the tensor cores'
// rate. Zero FLOPs gives 0 x 0 x 0.
struct GemmShape {
  int64_t m = 0, n = 0, k = 0, repeats = 1;
};
GemmShape gemm_for_flops(double flops, int64_t max_side);

}  // namespace pipetwin
