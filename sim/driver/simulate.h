// One simulated run: scenario -> ResolvedScenario -> Program -> executor -> Timeline.
#pragma once

#include <string>
#include <vector>

#include "sim/driver/engine.h"
#include "sim/driver/resource_limits.h"
#include "sim/exec/execution_times.h"
#include "sim/exec/link_usage.h"
#include "sim/exec/memory_curve.h"
#include "sim/program/program.h"
#include "sim/scenario/loaded_scenario.h"
#include "sim/spec/resolved_scenario.h"
#include "traces/timeline.h"

namespace pipetwin {

struct SimulationOptions {
  Engine engine = Engine::kAnalytic;
  // Report devices whose peak memory exceeds their capacity instead of failing.
  bool allow_oom = false;
  // A scenario whose Program would be larger is an InputError before anything is built.
  ResourceLimits limits;
  // The timeline: its spans, memory counters and link-utilization counters, which traces and
  // reports draw. Without it SimulationResult::timeline holds the devices and the source
  // only, and metrics come from the Program (analysis/metrics.h): at 16,384 GPUs the timeline
  // was 43% of a `simulate --json` run.
  bool timeline = true;
};

struct SimulationResult {
  ResolvedScenario setup;
  Program program;
  ExecutionTimes times;
  MemoryCurve memory;
  Timeline timeline;
  std::vector<int32_t> out_of_memory;  // devices over capacity (with allow_oom)
  std::vector<LinkUsage> links;        // links that carried traffic
};

// Throws InputError for a bad scenario, RuntimeFailure for a run that fails
// (a device out of memory without allow_oom).
SimulationResult simulate(const LoadedScenario& loaded, const SimulationOptions& options);
// The same, from a scenario already resolved (and possibly changed in code).
SimulationResult simulate_setup(const ResolvedScenario& setup, const SimulationOptions& options);
// A Program built elsewhere (read from Chakra traces, interference already in its times) on
// the setup's cluster: its devices must be the cluster's first ones.
SimulationResult simulate_program(const ResolvedScenario& setup, Program program,
                                  const SimulationOptions& options);

}  // namespace pipetwin
