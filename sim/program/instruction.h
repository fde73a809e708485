// One instruction of the program IR (docs/schedules.md, "The Program").
#pragma once

#include <cstdint>
#include <string>

#include "sim/spec/sample_range.h"

namespace pipetwin {

enum class Op : uint8_t {
  kFwd,
  kBwd,
  kSendAct,
  kRecvAct,
  kSendGrad,
  kRecvGrad,
  kOptim,
  kAllreduce,
  kOffload,  // (part of) a FWD's stash, device -> host memory, on the copy lane
  kReload,   // and back, before the BWD that needs it
  // PipeFB: a stage's forward device hands the stash to its backward device, which sends
  // the updated weights back after OPTIM.
  kSendStash,
  kRecvStash,
  kSendWeights,
  kRecvWeights,
  // FreezePipe: a repartition moves layers' parameters (and optimizer state) between
  // devices, between two phases of a training run.
  kMigrate,
  kMigrateRecv,
  // Asynchronous pipelines: a weight version that in-flight microbatches still need goes
  // to host memory before the update that would overwrite it, on the copy lane ...
  kOffloadWeights,
  // ... and comes back before the first BWD that needs it, held until the last one ends.
  kReloadWeights,
  // Zero-bubble pipelines (Qi et al., ICLR 2024) split a BWD in two compute ops: the
  // input gradient (B), which the upstream stage waits for, and the weight gradients (W),
  // which only the stage's update waits for, so W can fill what would be a bubble.
  kBwdInput,
  kBwdWeight,
  // Expert parallelism: the all-to-alls (dispatch and combine) of a pass's mixture-of-experts
  // layers among its expert group, on the collective lane.
  kAllToAll,
  // Sharded data parallelism (ZeRO): gradients reduce-scattered over the replicas holding
  // the same weights, and weights all-gathered (after the update for stages 1 and 2, around
  // each pass for stage 3), on the collective lane.
  kReduceScatter,
  kAllGather,
};
// The enum's last value, for code that walks every op.
inline constexpr Op kLastOp = Op::kAllGather;
// A device's lanes: its compute stream, its send and receive queues, its copy engine, and
// two collective streams, as a framework keeps one communicator per process group: one for
// the collectives a pass needs (tensor parallelism's all-reduces, expert parallelism's
// all-to-alls, context parallelism's exchanges) and one for those over the data-parallel
// replicas (gradient reductions, ZeRO's gathers), so that a gradient bucket's reduction
// overlaps the backward's own collectives instead of queuing behind them.
enum class Lane : uint8_t { kCompute, kSend, kRecv, kCopy, kCollective, kDataParallel };
inline constexpr int kLaneCount = 6;

const char* op_name(Op op);        // "FWD", "SEND_ACT", ...
const char* lane_name(Lane lane);  // "compute", "send", ...
// The lane of an op; a collective over the replicas is on Lane::kDataParallel instead.
Lane lane_of(Op op);
// A lane that holds collectives.
inline bool is_collective_lane(int lane_kind) {
  return lane_kind == static_cast<int>(Lane::kCollective) ||
         lane_kind == static_cast<int>(Lane::kDataParallel);
}

inline bool is_send(Op op) {
  return op == Op::kSendAct || op == Op::kSendGrad || op == Op::kSendStash ||
         op == Op::kSendWeights || op == Op::kMigrate;
}
inline bool is_recv(Op op) {
  return op == Op::kRecvAct || op == Op::kRecvGrad || op == Op::kRecvStash ||
         op == Op::kRecvWeights || op == Op::kMigrateRecv;
}
// The RECV that pairs with a SEND of this kind, and vice versa.
Op partner_op(Op op);
// A whole backward or either part of a split one.
inline bool is_backward(Op op) {
  return op == Op::kBwd || op == Op::kBwdInput || op == Op::kBwdWeight;
}
// The backward ops that produce the gradient for the stage upstream (and consume the one
// from downstream): BWD, or a split backward's BWD_INPUT.
inline bool computes_input_gradient(Op op) { return op == Op::kBwd || op == Op::kBwdInput; }
// The ops that the stage's OPTIM and its data-parallel ALLREDUCE wait for: BWD, or a split
// backward's BWD_WEIGHT.
inline bool computes_weight_gradient(Op op) { return op == Op::kBwd || op == Op::kBwdWeight; }
inline bool is_pass(Op op) { return op == Op::kFwd || is_backward(op); }
inline bool is_transfer(Op op) { return is_send(op) || is_recv(op); }
inline bool is_collective(Op op) {
  return op == Op::kAllreduce || op == Op::kAllToAll || op == Op::kReduceScatter ||
         op == Op::kAllGather;
}
inline bool is_copy(Op op) {
  return op == Op::kOffload || op == Op::kReload || op == Op::kOffloadWeights ||
         op == Op::kReloadWeights;
}
// A copy from device to host memory (the others go back).
inline bool copies_to_host(Op op) { return op == Op::kOffload || op == Op::kOffloadWeights; }

struct Instruction {
  Op op = Op::kFwd;
  // A collective over the data-parallel replicas (a stage's gradient reduction, ZeRO's
  // gathers of its weights): on the data-parallel lane.
  bool data_parallel = false;
  // Collectives: how many collectives of bytes / collectives each it stands for (tensor
  // parallelism's per-block all-reduces of one FWD or BWD, expert parallelism's dispatch and
  // combine per MoE layer, ZeRO-3's per-layer all-gathers), each paying its own latency.
  uint16_t collectives = 1;
  int32_t device = 0;
  int32_t stage = 0;
  // Index of the range within its stage's partition of the minibatch. For a transfer,
  // the index on the sending side.
  int32_t microbatch = 0;
  SampleRange range;
  int32_t iteration = 0;
  int32_t peer_device = -1;  // transfers: the other end
  // transfers, copies: payload; ALLREDUCE, REDUCE_SCATTER: the gradients reduced;
  // ALL_GATHER: the weights gathered; ALL_TO_ALL: each member's send buffer
  int64_t bytes = 0;
  double compute_s = 0;  // compute ops: duration on this device
  // Extra seconds this op takes because compute and transfers of its device overlap
  // (cluster.interference; set by apply_interference, 0 otherwise). Both ends of a
  // transfer, and all members of a collective, carry the same value.
  double interference_s = 0;
  // FWD allocates this at its start; BWD frees it at its end; a SEND_STASH frees it on
  // the forward device when the stash has left. A split backward frees the FWD's stash in
  // two parts: BWD_INPUT what the weight gradients do not need, BWD_WEIGHT the rest, each
  // the bytes it carries here.
  int64_t stash_bytes = 0;
  // Collectives: how many seconds before the end of the compute op it waits for on its own
  // device it may start, because that op has produced its data by then (a gradient bucket
  // that the backward's last layers fill first). At most that op's duration; 0: at its end.
  double lead_s = 0;

  Lane lane() const { return data_parallel ? Lane::kDataParallel : lane_of(op); }
  // A collective that starts while the compute op it waits for still runs.
  bool starts_under_compute() const { return lead_s > 0; }
};

// Text form after PyTorch pipelining's _Action: "2F0", "2B0", "2I0" (BWD_INPUT), "2W0"
// (BWD_WEIGHT), "1SEND_A3", "1RECV_G3", "0OPT", "0AR" (all-reduce); with `show_range` the
// microbatch index becomes the range: "2F[0,48)".
std::string instruction_text(const Instruction& instr, bool show_range);

}  // namespace pipetwin
