// The automatic zero-bubble schedule's own heuristic (Qi et al., "Zero Bubble Pipeline
// Parallelism", ICLR 2024, section 3.1), as the paper states it:
//  1. warm-up: each stage runs as many forwards as fit its memory before its first B, but
//     stops where another forward would delay that B (or, with `bubble_before_first_b`,
//     where it would end after B's input arrives: a gap shorter than F may stay); the warm-up
//     counts fall strictly from stage to stage;
//  2. steady part: one F and one B per microbatch and stage, the B's from the last stage to
//     the first; a W goes into every gap before a pass's input arrives that is at least W
//     long, and into a shorter one when leaving that gap would make this stage's idle time
//     the pipeline's largest (`fill_small_gaps` then also fills it when it would not);
//  3. a W runs whenever the next pass would exceed the memory limit;
//  4. the W's left run at the end.
// With `prioritize_b`, a stage that is two or more forwards ahead of the next one skips its
// forward when the next stage's F and B would otherwise wait for it. The paper runs the
// heuristic with each setting of the three and keeps the schedule whose longest stage (from
// its first F's start to its last W's end) is shortest: that is the time each iteration adds
// once iterations overlap (the paper's post-update validation), and it reaches the paper's
// ZB-1p and ZB-2p bubbles on its profiled stage times (docs/schedules.md).
#pragma once

#include <cstdint>
#include <optional>

#include "sim/schedule/zero_bubble_auto.h"

namespace pipetwin {

struct ZbHeuristicSettings {
  bool bubble_before_first_b = false;
  bool prioritize_b = false;
  bool fill_small_gaps = false;
};

// The heuristic's order for `microbatches` microbatches on `costs`' stages, each stage's
// stashes within `limit_microbatches` of its microbatch's; nullopt where a pass cannot fit
// the limit even with every pending W run first.
std::optional<ComputeOrder> zb_heuristic_order(int32_t microbatches,
                                               const LinearPipelineCosts& costs,
                                               double limit_microbatches,
                                               const ZbHeuristicSettings& settings);

// The paper's figure of merit: the longest time any stage spends from the start of its first
// pass to the end of its last (the bubble is 1 - M(F+B+W) / it on equal stages).
double longest_stage_s(const TimedComputeOrder& timed, const LinearPipelineCosts& costs);

}  // namespace pipetwin
