#include "fuzz_support.h"

#include "analysis/metrics.h"
#include "sim/freeze/training_run.h"
#include "sim/driver/simulate.h"
#include "traces/chrome_trace.h"

namespace pipetwin::fuzz {

void simulate_within_limits(const ResolvedScenario& setup) {
  // The guard `pipetwin simulate` applies before building anything.
  check_resource_limits(setup, fuzz_limits());
  SimulationOptions options;
  options.engine = Engine::kAnalytic;
  options.allow_oom = true;  // report, do not stop: the timeline and metrics still follow
  options.limits = fuzz_limits();
  if (setup.freeze.enabled) {
    if (setup.freeze.measured()) return;  // only `pipetwin run` has measured gradients
    const TrainingRun run = simulate_training(setup, options);
    (void)chrome_trace_json(run.overview);
    return;
  }
  const SimulationResult result = simulate_setup(setup, options);
  (void)compute_metrics(result.timeline, result.setup.training.iterations,
                        result.setup.training.global_batch);
  // `simulate --trace`: every simulated Timeline must be representable.
  (void)chrome_trace_json(result.timeline);
}

void load_and_simulate(const std::string& text, const std::string& allowed_file) {
  expect_only_reported_errors([&] {
    const LoadedScenario loaded = parse_scenario(text, "fuzz.textproto", "", true, {});
    if (!reads_only_embedded_files(loaded.scenario, allowed_file)) return;
    simulate_within_limits(resolve_scenario(loaded));
  });
}

}  // namespace pipetwin::fuzz
