// DualPipe (DeepSeek-AI, "DeepSeek-V3 Technical Report", 2024): two copies of a K-stage
// pipeline run in opposite directions over the same K devices. Device d holds stage d of the
// forward pipeline and stage K-1-d of the reverse one; half the microbatches enter at device
// 0, half at device K-1. In the steady state every device pairs a forward of one direction
// with a backward of the other, and the weight gradients (W) of the first and last
// microbatches fill the warm-up and cool-down, as in the zero-bubble schedules.
//
// In a Program the forward pipeline's stages are 0..K-1 and the reverse pipeline's stages are
// K..2K-1 (stage K+j is model stage j, on device K-1-j), which is ZB-V's placement of 2K
// chunks; Program::model_stage says which stages are copies of one another.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/schedule/compute_order.h"
#include "sim/schedule/lowering.h"
#include "sim/schedule/zero_bubble_order.h"

namespace pipetwin {

// Turns a layout of the model's K stages (stage s on device s, each covering the whole
// batch) into DualPipe's 2K: stage K+j copies stage j onto device K-1-j, the first half of
// every replica's microbatches goes through stages 0..K-1 and the second half through
// K..2K-1. The copies' weights must already be counted in static_bytes.
void add_reverse_pipeline(PipelineLayout& layout);

// Each device's compute order, after DeepSeek's reference implementation (dualpipe.py, its
// eight steps): with h = min(d, K-1-d), device d first runs 2(K/2-h-1) forwards of the
// direction that enters on its side, then h+1 forwards of each direction, then pairs of
// (forward, backward) across the directions, and drains with backwards and W's. Backwards
// are split: a W follows its B at once, except in the warm-up and cool-down where W's wait
// in a queue (first in, first out) for an idle slot. Needs devices even and microbatches
// (in all, half per direction) even and at least 2 x devices.
ComputeOrder dualpipe_order(int32_t devices, int32_t microbatches);

// When each action of `order` ends with free communication, given each stage's pass costs
// (2K entries): what lowering posts receives by (ProductionTimes). Throws std::logic_error
// if the order deadlocks.
ProductionTimes dualpipe_end_times(const ComputeOrder& order,
                                   const std::vector<ChunkPassCosts>& stage_costs);

}  // namespace pipetwin
