#include "sim/driver/steady_state.h"

#include <algorithm>
#include <cmath>

#include "sim/exec/interference.h"
#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

constexpr int32_t kProbes[] = {4, 8, 16, 32};

SimulationResult simulate_iterations(ResolvedScenario setup, int32_t iterations,
                                     const SimulationOptions& options) {
  setup.training.iterations = iterations;
  return simulate_setup(setup, options);
}

// Each device's compute time in the run.
std::vector<double> compute_per_device(const SimulationResult& result) {
  std::vector<double> busy(result.program.num_devices, 0.0);
  for (size_t i = 0; i < result.program.instructions.size(); ++i) {
    const Instruction& ins = result.program.instructions[i];
    if (activity_of(ins.op) != Activity::kCompute) continue;
    busy[ins.device] += result.times.end_s[i] - result.times.start_s[i];
  }
  return busy;
}

}  // namespace

bool can_extrapolate(const ResolvedScenario& setup, const SimulationOptions& options) {
  return !setup.freeze.enabled && options.engine == Engine::kAnalytic &&
         setup.training.iterations > kProbes[std::size(kProbes) - 1] + 2;
}

std::optional<SteadyStateRuns> find_steady_state(const ResolvedScenario& setup,
                                                 const SimulationOptions& options) {
  for (const int32_t n : kProbes) {
    SimulationResult a = simulate_iterations(setup, n, options);
    SimulationResult b = simulate_iterations(setup, n + 1, options);
    const SimulationResult c = simulate_iterations(setup, n + 2, options);
    const double first = b.times.last_end_s() - a.times.last_end_s(),
                 second = c.times.last_end_s() - b.times.last_end_s();
    if (std::abs(first - second) <= 1e-9 * c.times.last_end_s()) {
      return SteadyStateRuns{std::move(a), std::move(b)};
    }
  }
  return std::nullopt;
}

std::optional<SteadyStateIteration> steady_state_iteration(const ResolvedScenario& setup,
                                                           const SimulationOptions& options) {
  if (options.engine != Engine::kAnalytic) {
    throw InputError("--steady-state: the analytic engine only (it simulates several runs)");
  }
  if (setup.freeze.enabled) {
    throw InputError("--steady-state: not with freeze.enabled (FreezePipe's iterations change)");
  }
  SimulationOptions quiet = options;
  quiet.timeline = false;
  const std::optional<SteadyStateRuns> runs = find_steady_state(setup, quiet);
  if (!runs) return std::nullopt;
  SteadyStateIteration s;
  s.iteration_s = runs->longer.times.last_end_s() - runs->shorter.times.last_end_s();
  s.simulated_iterations = runs->longer.setup.training.iterations;
  const std::vector<double> before = compute_per_device(runs->shorter);
  const std::vector<double> after = compute_per_device(runs->longer);
  for (size_t d = 0; d < after.size() && d < before.size(); ++d) {
    s.busiest_compute_s = std::max(s.busiest_compute_s, after[d] - before[d]);
  }
  s.bubble = s.iteration_s > 0 ? 1 - s.busiest_compute_s / s.iteration_s : 0;
  return s;
}

}  // namespace pipetwin
