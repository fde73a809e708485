// The device operations of a physical-GPU replay (see replay_plan.h), in plain C++17 with
// no sim/ types, so that nvcc compiles what backend/cuda includes of it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "backend/common/lane_runner.h"

namespace pipetwin {

// compute, send, recv, copy, collective, data-parallel
inline constexpr int kReplayLanes = 6;

enum class ReplayKind : uint8_t {
  kGemm,
  kSpin,
  kSend,
  kRecv,
  kToHost,
  kToDevice,
  kAllReduce,
  kAllToAll,
  kReduceScatter,  // ZeRO: bytes is the whole buffer, each member keeps 1/n
  kAllGather       // ZeRO: bytes is the gathered result
};
const char* replay_kind_name(ReplayKind kind);

struct ReplayOp {
  int32_t instruction = 0;  // index in the Program
  std::string text;         // its name in traces and messages ("0F4")
  int32_t stage = 0;
  int32_t iteration = 0, microbatch = 0;  // a FWD and its OFFLOAD and RELOAD share these
  ReplayKind kind = ReplayKind::kSpin;
  int lane = 0;  // a Lane of sim/program/instruction.h: one CUDA stream per lane
  // kGemm: `repeats` times C[m x n] = A[m x k] B[k x n], repeats x 2 m n k FLOPs.
  int64_t m = 0, n = 0, k = 0, repeats = 1;
  double seconds = 0;          // kSpin
  int32_t peer = -1;           // kSend, kRecv: the other rank
  int64_t bytes = 0;           // transfers, copies, all-reduce
  std::vector<int32_t> group;  // collectives: the ranks, sorted
  int64_t allocate_bytes = 0;  // a FWD's stash (see stash_ledger.h for when it is held)
  int64_t free_bytes = 0;      // a BWD's share of its stage's stashes
  bool weights = false;        // kToHost, kToDevice: a stashed weight version's copy
  // Instructions of this rank on other lanes whose end event this op waits for (the same
  // lane's order is the stream's own).
  std::vector<int32_t> wait_for;
};

struct ReplaySizing {
  double device_flops = 0;    // peak x efficiency: what the cost model divides FLOPs by
  bool flop_counted = false;  // the model's costs are FLOPs (zoo), not measured times
  int64_t max_gemm_side = 8192;
};

struct ReplayPlan {
  int32_t rank = 0;
  int32_t program_size = 0;  // instructions of the whole Program, every rank's
  // The stash bytes this rank is predicted to hold at most (stash_ledger.h, at the
  // simulated times): the memory pool is grown to it before the timed run, as a training
  // framework's allocator has grown by its first timed step.
  int64_t stash_reserve_bytes = 0;
  // Weights, gradients and optimizer state of the rank's stages (Program::static_bytes):
  // allocated once before the run, so that the stashes meet the memory pressure the
  // Program accounts.
  int64_t resident_bytes = 0;
  std::vector<ReplayOp> ops;  // lane by lane, each in the Program's lane order
  // Of the whole Program, the same on every rank: each (sender, receiver) pair that
  // transfers, and each collective group by (lane, its sorted ranks). The executor gives
  // every one its own NCCL communicator, so that each is driven by one stream per rank in
  // one order (two lanes that reduce over the same ranks get two communicators).
  std::vector<std::pair<int32_t, int32_t>> transfer_pairs;
  std::vector<std::pair<int, std::vector<int32_t>>> groups;
};

// One order of the plan's ops that a single host thread could enqueue them in: each lane
// in its own order, an op only after every op it waits for (a CUDA stream waits for an
// event's latest record, so the record must come first). Indices into plan.ops. Throws
// std::runtime_error if the lanes wait for each other in a circle.
std::vector<size_t> host_enqueue_order(const ReplayPlan& plan);

// The plan as the shared lane runner takes it: the executor enqueues each lane from its
// own host thread, an op once the ops it waits for are enqueued.
LaneSchedule lane_schedule(const ReplayPlan& plan);

}  // namespace pipetwin
