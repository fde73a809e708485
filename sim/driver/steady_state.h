// Long training runs without freezing repeat one iteration once the pipeline is in its
// steady state: each further iteration adds the same time, bytes and busy time. Instead of
// simulating 100 million identical iterations, pipetwin simulates a few and extrapolates.
#pragma once

#include <optional>

#include "sim/driver/simulate.h"

namespace pipetwin {

struct SteadyStateRuns {
  SimulationResult shorter;  // n iterations
  SimulationResult longer;   // n + 1 iterations: what the timeline and trace show
};

// Whether a run of `setup` can be extrapolated: no FreezePipe phases, more iterations than
// the probes simulate, and the analytic engine (SimGrid allows one engine per process, and
// the probes are several simulations).
bool can_extrapolate(const ResolvedScenario& setup, const SimulationOptions& options);

// Simulates n, n + 1 and n + 2 iterations for n = 4, 8, 16, 32 until the makespan grows by
// the same amount twice (to a relative 1e-9: the max-plus dynamics of a pipeline become
// periodic with a period of one iteration); nullopt when it never does.
std::optional<SteadyStateRuns> find_steady_state(const ResolvedScenario& setup,
                                                 const SimulationOptions& options);

// The steady state of a run: the time each further iteration adds once iterations repeat
// (Zero Bubble PP's tables count their bubbles in it: their iterations overlap, the next
// starting while the last stages finish this one), and the bubble in it: 1 - the busiest
// device's compute per iteration over that time.
struct SteadyStateIteration {
  double iteration_s = 0;
  double bubble = 0;
  double busiest_compute_s = 0;  // per iteration, on the busiest device
  int32_t simulated_iterations = 0;
};

// nullopt where iterations never settle within the probes; throws InputError for an engine
// other than the analytic one or a FreezePipe run (whose iterations change).
std::optional<SteadyStateIteration> steady_state_iteration(const ResolvedScenario& setup,
                                                           const SimulationOptions& options);

}  // namespace pipetwin
