// Lowering's transfer pass: wires every compute op to what it consumes and produces.
// A FWD of stage s waits for every range of stage s-1 that overlaps its own (one
// SEND_ACT/RECV_ACT pair per overlapping piece, or a plain dependency when both stages share
// a device); a BWD (or BWD_INPUT) waits likewise for the overlapping gradient ranges of
// stage s+1 (SEND_GRAD/RECV_GRAD), and for its own stage's forwards of those samples; a
// BWD_WEIGHT waits for the BWD_INPUT of its samples. SENDs sit on the producer's send lane
// in production order, RECVs on the consumer's recv lane in consumption order, and every
// SEND is paired with its RECV. A gradient into a stage that trains nothing carries no
// bytes (a token keeps the order).
#pragma once

#include "sim/program/program.h"
#include "sim/schedule/lowering_context.h"

namespace pipetwin {

// `production_times` (optional, lower's): per device, one entry per action of `order`,
// when the schedule expects that action's output. With it, the RECVs of each round
// (LaneSteps::round) are posted in the order their data is produced instead of the order
// it is consumed, so that devices that consume in another order than their neighbours
// produce (ZB-V) cannot deadlock on a rendezvous.
void add_transfers(const LoweringContext& context, const LoweredCompute& compute,
                   ProgramBuilder& builder, const ComputeOrder& order = {},
                   const ProductionTimes& production_times = {});

}  // namespace pipetwin
