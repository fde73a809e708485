#include "sim/planner/selective_offload.h"

#include <algorithm>
#include <numeric>

#include "sim/exec/analytic_executor.h"
#include "sim/exec/memory_curve.h"

namespace pipetwin {
namespace {

struct Outcome {
  double makespan = 0;
  std::vector<int64_t> peaks;  // per device
};

Outcome evaluate(const PipelineLayout& layout, const ComputeOrder& order,
                 const ClusterSpec& cluster) {
  const Program program = lower(layout, order, 1);
  const ExecutionTimes times = run_analytic(program, cluster);
  Outcome outcome;
  outcome.makespan = times.last_end_s();
  for (const MemoryPeak& peak : memory_curve(program, times).peaks) {
    outcome.peaks.push_back(peak.bytes);
  }
  return outcome;
}

}  // namespace

std::vector<double> select_offloaded_stages(const PipelineLayout& layout, const ComputeOrder& order,
                                            const ClusterSpec& cluster) {
  const std::vector<double> candidates = layout.offload_fraction;
  PipelineLayout trial = layout;
  std::fill(trial.offload_fraction.begin(), trial.offload_fraction.end(), 0.0);
  Outcome best = evaluate(trial, order, cluster);
  // Stages holding the most activations per sample first: they gain the most.
  std::vector<int32_t> stages(candidates.size());
  std::iota(stages.begin(), stages.end(), 0);
  std::stable_sort(stages.begin(), stages.end(), [&](int32_t a, int32_t b) {
    return layout.costs[a].stash_bytes_per_sample > layout.costs[b].stash_bytes_per_sample;
  });
  for (int32_t s : stages) {
    if (candidates[s] <= 0 || layout.costs[s].stash_bytes_per_sample <= 0) continue;
    trial.offload_fraction[s] = candidates[s];
    const Outcome outcome = evaluate(trial, order, cluster);
    const int32_t device = layout.stage_device[s];
    const bool lower_peak = outcome.peaks[device] < best.peaks[device];
    const bool no_slower = outcome.makespan <= best.makespan * (1 + 1e-9);
    if (lower_peak && no_slower) {
      best = outcome;
    } else {
      trial.offload_fraction[s] = 0;
    }
  }
  return trial.offload_fraction;
}

}  // namespace pipetwin
