// Zero-bubble compute orders (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024):
// every backward is split into its input gradient B (BWD_INPUT), which the stage upstream
// waits for, and its weight gradients W (BWD_WEIGHT), which only the stage's update waits
// for, so W can be put where the stage would otherwise idle.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/schedule/compute_order.h"

namespace pipetwin {

// Every BWD of `order` becomes a BWD_INPUT followed at once by its BWD_WEIGHT: the same
// schedule with split backwards. The gradient then leaves before W runs: 1F1B split so
// takes M(F+B+W) + (K-1)(F+B) with free communication, against (M+K-1)(F+B+W) unsplit.
ComputeOrder split_backwards(const ComputeOrder& order);

// ZB-H1, stage s on device s of K: min(M, K-s-1) warm-up forwards, then for the i-th of
// the remaining M-w forwards F, B and (when i >= s) the oldest pending W; then the w
// cool-down B's, each followed by a W when M-w+i >= s; then the W's left. It holds at most
// K-s microbatches' stashes, as 1F1B does, and with free communication and M >= K its
// makespan is M(F+B+W) + (K-1)(F+B-W), for any F, B, W.
ComputeOrder zb_h1_order(int32_t stages, int32_t microbatches);

// ZB-H2: min(M, 2(K-s)-1) warm-up forwards, then B,F pairs until the forwards run out, then
// B,W pairs, then the W's left. With F = B = W and M >= 2K-1 no stage idles between its
// first and its last op; it holds up to 2(K-s)-1 microbatches' stashes, about twice 1F1B.
ComputeOrder zb_h2_order(int32_t stages, int32_t microbatches);

// The costs of one model chunk's passes, and the stash its forward allocates and each half
// of its backward frees (any unit; ZB-V compares a device's sum with a limit).
struct ChunkPassCosts {
  double fwd_s = 0;
  double bwd_input_s = 0;
  double bwd_weight_s = 0;
  double stash = 0;         // allocated by F
  double weight_stash = 0;  // of which W frees this much, B the rest
  bool operator==(const ChunkPassCosts&) const = default;
};

// A pass's time on its chunk.
inline double pass_seconds(const ChunkPassCosts& c, Op op) {
  return op == Op::kFwd ? c.fwd_s : op == Op::kBwdInput ? c.bwd_input_s : c.bwd_weight_s;
}

// The most one microbatch holds of a chunk's stash at once: its forward's, or with full
// recomputation W's share rebuilt by B (more than the checkpoint). Memory limits' unit.
inline double microbatch_peak(const ChunkPassCosts& c) {
  return c.stash > c.weight_stash ? c.stash : c.weight_stash;
}

// What a pass does to its chunk's held stash: F allocates it, B frees all but W's share,
// W frees that share.
inline double stash_change(const ChunkPassCosts& c, Op op) {
  return op == Op::kFwd        ? c.stash
         : op == Op::kBwdInput ? -(c.stash - c.weight_stash)
                               : -c.weight_stash;
}

// ZB-V on `devices` devices, 2 x devices chunks in a V: device d holds chunk d and chunk
// 2 x devices - 1 - d, so the first and the last chunk (the loss) are on device 0. The
// order comes from a greedy list scheduler over the chunks' costs (communication ignored):
// each device, whenever it is free, runs a ready B, else a ready F whose stash fits, else
// its oldest pending W, else waits for the next input; a device's stashes in flight stay
// within what 1F1B's first stage holds, min(devices, M) microbatches of the device's two
// chunks. `chunk_costs` has one entry per chunk (2 x devices).
ComputeOrder zb_v_order(int32_t devices, int32_t microbatches,
                        const std::vector<ChunkPassCosts>& chunk_costs);

// The same order with, per device and action, when the scheduler expects it to end: what
// lowering posts receives by (lowering.h, production_times).
struct TimedComputeOrder {
  ComputeOrder order;
  std::vector<std::vector<double>> end_s;
};
TimedComputeOrder zb_v_schedule(int32_t devices, int32_t microbatches,
                                const std::vector<ChunkPassCosts>& chunk_costs);

// The device of chunk c in ZB-V's V placement.
inline int32_t v_chunk_device(int32_t devices, int32_t chunk) {
  return chunk < devices ? chunk : 2 * devices - 1 - chunk;
}

}  // namespace pipetwin
