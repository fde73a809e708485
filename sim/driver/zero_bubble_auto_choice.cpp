#include "sim/driver/zero_bubble_auto_choice.h"

#include <algorithm>
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

// The iterations the choice lowers: with iterations overlapping (nothing but each stage's
// own update separates them), the second and third tell the time each further one adds.
constexpr int32_t kProbeIterations = 3;

// What the engine predicts for the scenario's whole run on this lowering: its makespan for
// up to kProbeIterations iterations, extrapolated from the last two of them for more; infinity
// where the posting deadlocks.
double engine_run_s(const ResolvedScenario& setup, const PipelineLayout& one,
                    const ComputeOrder& order, const ProductionTimes& production_times) {
  const int32_t iterations = std::max(1, setup.training.iterations);
  const int32_t probed = std::min(iterations, kProbeIterations);
  Program program = lower(one, order, probed, production_times);
  if (!setup.schedule.comm_overlap) block_compute_on_transfers(program);
  try {
    validate_program(program);
  } catch (const InputError&) {
    return std::numeric_limits<double>::infinity();  // a cycle through a rendezvous
  }
  const ExecutionTimes times = run_analytic(program, setup.cluster);
  // The makespan of the first k iterations, k = 1..probed (none waits for a later one).
  std::vector<double> ends(probed, 0.0);
  for (size_t i = 0; i < program.instructions.size(); ++i) {
    const int32_t it = program.instructions[i].iteration;
    for (int32_t k = std::max(it, 0); k < probed; ++k) ends[k] = std::max(ends[k], times.end_s[i]);
  }
  if (iterations == probed) return ends.back();
  const double per_iteration = ends[probed - 1] - ends[probed - 2];
  return ends.back() + (iterations - probed) * per_iteration;
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
      const double makespan = engine_run_s(setup, one, candidate.order, posting);
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
