// ZB_AUTO's order, chosen by the analytic engine among the greedy scheduler's candidates
// (sim/schedule/zero_bubble_auto.h). The scheduler times a pass from its inputs' arrival;
// the engine also has every transfer hold its sender's send lane and its receiver's recv lane
// (a rendezvous), so where transfers meet on a lane the two disagree, and the order the
// receives are posted in matters. The engine decides.
#pragma once

#include <vector>

#include "sim/schedule/lowering.h"
#include "sim/schedule/zero_bubble_auto.h"
#include "sim/spec/resolved_scenario.h"

namespace pipetwin {

struct ChosenOrder {
  ComputeOrder order;
  ProductionTimes production_times;  // empty: receives posted in consumption order
};

// Lowers every candidate on one replica of the pipeline (no data, expert or context
// parallelism, none of the passes after lowering but blocking transfers), its receives
// posted in consumption order and in the scheduler's production order, and keeps what the
// analytic engine finishes first over the scenario's iterations (up to three lowered, more
// extrapolated by the time the third adds: iterations overlap, so a schedule's own makespan
// and the time it adds per iteration differ); a posting that deadlocks on a rendezvous is
// skipped. Ties go to the candidate listed first, consumption order first.
ChosenOrder choose_zb_auto_order(const ResolvedScenario& setup, const PipelineLayout& layout,
                                 const std::vector<TimedComputeOrder>& candidates);

}  // namespace pipetwin
