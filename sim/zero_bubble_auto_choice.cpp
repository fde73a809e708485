#include "sim/zero_bubble_auto_choice.h"

#include <limits>
#include <stdexcept>

#include "sim/exec/analytic_executor.h"
#include "sim/program/validate_program.h"
#include "sim/schedule/blocking_transfers.h"
#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

// Replica 0 of the pipeline alone: its stages, transfers and updates.
PipelineLayout one_replica(const PipelineLayout& layout) {
  PipelineLayout one = layout;
  one.global_batch = layout.global_batch / layout.replicas;
  one.replicas = 1;
  one.num_devices = layout.devices_per_replica;
  one.expert_parallel = 1;
  one.context_parallel = 1;
  one.static_bytes.resize(one.num_devices);
  return one;
}

// The engine's makespan of one lowering, or infinity where the posting deadlocks.
double engine_makespan(const ResolvedScenario& setup, const PipelineLayout& one,
                       const ComputeOrder& order, const ProductionTimes& production_times) {
  Program program = lower(one, order, /*iterations=*/1, production_times);
  if (!setup.schedule.comm_overlap) block_compute_on_transfers(program);
  try {
    validate_program(program);
  } catch (const InputError&) {
    return std::numeric_limits<double>::infinity();  // a cycle through a rendezvous
  }
  return run_analytic(program, setup.cluster).span_s();
}

}  // namespace

ChosenOrder choose_zb_auto_order(const ResolvedScenario& setup, const PipelineLayout& layout,
                                 const std::vector<TimedComputeOrder>& candidates) {
  const PipelineLayout one = one_replica(layout);
  double best = std::numeric_limits<double>::infinity();
  ChosenOrder chosen;
  for (const TimedComputeOrder& candidate : candidates) {
    for (bool production_order : {false, true}) {
      const ProductionTimes posting = production_order ? candidate.end_s : ProductionTimes{};
      const double makespan = engine_makespan(setup, one, candidate.order, posting);
      if (makespan < best) {
        best = makespan;
        chosen = {candidate.order, posting};
      }
    }
  }
  if (best == std::numeric_limits<double>::infinity()) {
    throw std::logic_error("ZB_AUTO: every candidate order deadlocks");
  }
  return chosen;
}

}  // namespace pipetwin
