// What the schedulers that order passes by their times read from a layout (ZB-V, DualPipe,
// ZB_AUTO; and `pipetwin tune`'s fast evaluator, which orders as they do).
#pragma once

#include <vector>

#include "sim/schedule/lowering.h"
#include "sim/schedule/zero_bubble_auto.h"
#include "sim/spec/resolved_scenario.h"

namespace pipetwin {

// Each chunk's pass times for the first microbatch and its stash (microbatches are equal up
// to one sample). A model without stashes counts one unit per chunk and microbatch, so that
// a memory limit still bounds the forwards in flight.
std::vector<ChunkPassCosts> chunk_pass_costs(const PipelineLayout& layout);

// ZB_AUTO's view of one pipeline: each stage's passes, and each cut's transfer both ways.
LinearPipelineCosts linear_pipeline_costs(const ResolvedScenario& setup,
                                          const PipelineLayout& layout);

}  // namespace pipetwin
