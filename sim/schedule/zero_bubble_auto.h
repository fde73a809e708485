// The automatic zero-bubble schedule (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR
// 2024, section 3): instead of a handcrafted pattern, each stage's F, B and W are placed by a
// greedy list scheduler from the stages' own pass times and the transfer time of each cut,
// under a limit on the activation memory each stage may hold. ZB-1p is the limit of 1F1B's
// first stage (K microbatches' stashes on every stage), ZB-2p twice it.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/schedule/zero_bubble_order.h"

namespace pipetwin {

// A linear pipeline of K stages, stage s on device s.
struct LinearPipelineCosts {
  std::vector<ChunkPassCosts> stages;       // K entries
  std::vector<double> forward_transfer_s;   // cut s -> s+1, K-1 entries
  std::vector<double> backward_transfer_s;  // cut s+1 -> s, K-1 entries
  std::vector<double> update_s;             // each stage's optimizer step after its last W
};

// When each action of `order` ends if every pass starts as soon as its device is free and its
// input has arrived (a free device, no transfer contention): the pipeline's own max-plus
// timing, which the analytic engine reproduces with free links. `makespan_s` includes the
// update after each stage's last pass; `peak_stash` is, per stage, the most stash it holds.
struct OrderTiming {
  TimedComputeOrder timed;
  double makespan_s = 0;
  std::vector<double> peak_stash;
};
OrderTiming time_linear_order(const ComputeOrder& order, int32_t microbatches,
                              const LinearPipelineCosts& costs);

// ZB_AUTO's candidates: the paper's heuristic with each setting of its three choices
// (sim/schedule/zero_bubble_heuristic.h), the greedy scheduler's orders (each pass at its stage's
// free time, B before F before W, F only while the stage's stashes stay within `limit_microbatches`
// of what one of its microbatches holds at most (its forward's stash; with full recomputation, the
// larger activations B rebuilds for W), and before the stage's first B at most a warm-up count the
// variants vary, as the paper's heuristic does), and ZB-H1, ZB-H2 and 1F1B with split backwards
// where their stashes stay within the limit; each order once, the fastest on these costs first.
// `limit_microbatches` >= 1. Never empty: 1F1B with split backwards, which holds no more than 1F1B,
// is always among them.
std::vector<TimedComputeOrder> zb_auto_candidates(int32_t microbatches,
                                                  const LinearPipelineCosts& costs,
                                                  double limit_microbatches);

// The first of zb_auto_candidates: its order alone, without timing what it does not return
// (what `pipetwin tune`'s fast estimate asks for).
ComputeOrder zb_auto_fastest_order(int32_t microbatches, const LinearPipelineCosts& costs,
                                   double limit_microbatches);

}  // namespace pipetwin
