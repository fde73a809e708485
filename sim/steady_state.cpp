#include "sim/steady_state.h"

#include <algorithm>
#include <cmath>

namespace pipetwin {
namespace {

constexpr int32_t kProbes[] = {4, 8, 16, 32};

double makespan(const SimulationResult& result) {
  if (result.times.end_s.empty()) return 0;
  return *std::max_element(result.times.end_s.begin(), result.times.end_s.end());
}

SimulationResult simulate_iterations(ResolvedScenario setup, int32_t iterations,
                                     const SimulationOptions& options) {
  setup.training.iterations = iterations;
  return simulate_setup(setup, options);
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
    const double first = makespan(b) - makespan(a), second = makespan(c) - makespan(b);
    if (std::abs(first - second) <= 1e-9 * makespan(c)) {
      return SteadyStateRuns{std::move(a), std::move(b)};
    }
  }
  return std::nullopt;
}

}  // namespace pipetwin
