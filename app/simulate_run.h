// One `simulate` run, computed once and reported two ways: the command line prints it (a
// table or --json) and the Python module (python/) hands the same JSON object to scripts.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "analysis/metrics.h"
#include "sim/freeze/training_run.h"
#include "sim/scenario/loaded_scenario.h"
#include "sim/driver/simulate.h"
#include "sim/spec/resolved_scenario.h"
#include "traces/timeline.h"

namespace pipetwin {

// A run too large to simulate whole, in its steady state: the timeline of the longer probe,
// the metrics and link totals extrapolated to every iteration.
struct Extrapolation {
  int32_t simulated_iterations = 0;
  int64_t instructions = 0;  // of the full run: each iteration adds the same count
};

struct SimulateRun {
  ResolvedScenario setup;
  // A FreezePipe training run (freeze.enabled) ...
  std::optional<TrainingRun> training;
  // ... or one simulated run (possibly the longer probe of a steady-state extrapolation).
  std::optional<SimulationResult> result;
  RunMetrics metrics;
  std::optional<Extrapolation> extrapolation;
  bool from_chakra = false;  // a Program read from Chakra traces (no schedule of its own)

  // What --trace and --timeline write: the run's timeline, or the training run's overview.
  const Timeline& timeline() const;
  // The object `simulate --json` prints.
  nlohmann::json json() const;
};

// Resolves and simulates a loaded scenario (with its --set overrides applied). Throws
// InputError for bad input (the message names file, line and field), RuntimeFailure for a
// run that fails.
SimulateRun run_simulation(const LoadedScenario& loaded, const SimulationOptions& options);

// The Chakra traces in `dir` (one file per rank, sim/chakra/chakra_import.h) on the cluster
// of `scenario` (with its overrides); without one, of the scenario pipetwin recorded when it
// wrote the traces, else of the built-in quickstart.
SimulateRun run_chakra_simulation(const std::string& dir, const std::string& scenario,
                                  const std::vector<std::string>& overrides,
                                  const SimulationOptions& options);

}  // namespace pipetwin
