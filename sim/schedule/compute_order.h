// Schedules, compute only: for one iteration, the order in which each device runs
// its FWD and BWD actions. Communication is added afterwards by lowering
// (after PyTorch pipelining: schedule first, then a pass inserts SEND/RECV).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/program/instruction.h"
#include "sim/spec/stage_replicas.h"

namespace pipetwin {

struct ComputeAction {
  Op op = Op::kFwd;  // kFwd, kBwd, or a split backward's kBwdInput and kBwdWeight
  int32_t stage = 0;
  int32_t microbatch = 0;  // index into the stage's forward or backward ranges
  bool operator==(const ComputeAction&) const = default;
};

// Per device, in execution order.
using ComputeOrder = std::vector<std::vector<ComputeAction>>;

// Stage s runs on device s. All forwards, then all backwards (GPipe, Huang et al. 2019).
ComputeOrder gpipe_order(int32_t stages, int32_t microbatches);

// Stage s runs on device s: min(K-s-1, M) warm-up forwards, then alternate one forward
// and one backward, then drain (PipeDream-Flush / DAPPLE), so at most min(K-s, M)
// microbatches are stashed on stage s.
ComputeOrder one_f_one_b_order(int32_t stages, int32_t microbatches);

// Replicated stages (schedule.stage_replicas): one order per device, stage-major; replica
// k of stage s runs the microbatches m with m mod r_s = k, in the stage's order.
// GPipe: all of a device's forwards, then its backwards.
ComputeOrder gpipe_order(const StageReplicas& replicas, int32_t microbatches);
// 1F1B with PipeDream's warm-up: a replica of stage s keeps in_flight(s) of its
// microbatches in flight (NOAM, ceil(devices from s on / r_s)), so that the replicas
// downstream have work; one device per stage gives min(K-s-1, M) warm-up forwards as above.
ComputeOrder one_f_one_b_order(const StageReplicas& replicas, int32_t microbatches);

// UMPIPE (and GPipe with unequal cuts): stage s runs its forward_counts[s] forwards, then
// its backward_counts[s] backwards, in sample order.
ComputeOrder flush_order(const std::vector<int32_t>& forward_counts,
                         const std::vector<int32_t>& backward_counts);

// Megatron-LM's interleaved 1F1B: `devices` devices each hold `virtual_stages` model
// chunks; chunk c runs on device c % devices. Needs microbatches % devices == 0.
// With one virtual stage it is plain 1F1B.
ComputeOrder interleaved_order(int32_t devices, int32_t virtual_stages, int32_t microbatches);

}  // namespace pipetwin
