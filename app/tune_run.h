// `pipetwin tune` (and `pipetwin.tune()`): the search (sim/tune/tune_search.h), then SimGrid
// on the best few the analytic engine found, each in a child process (one SimGrid engine per
// process), timed as a whole; and the best configuration written back as a scenario.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/scenario/loaded_scenario.h"
#include "sim/tune/tune_search.h"

namespace pipetwin {

struct TuneRunOptions {
  TuneOptions search;
  // How many of the engine's best SimGrid also simulates (the first that fit its limits).
  int32_t simgrid = 2;
};

struct TuneRun {
  std::string scenario;  // its name
  TuneResult result;
  std::vector<TunePoint> simgrid;  // in the order of refined
  double wall_s = 0;
};

// Throws InputError for a bad option, RuntimeFailure when a SimGrid child fails.
TuneRun run_tune(const LoadedScenario& loaded, const TuneRunOptions& options);

// The scenario with the best configuration applied, as `tune --write-scenario` writes it
// (sim/scenario/scenario_writer.h); throws RuntimeFailure when nothing fit the memory limit.
void write_best_scenario(const LoadedScenario& loaded, const TuneRun& run,
                         const std::string& output);

}  // namespace pipetwin
