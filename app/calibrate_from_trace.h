// `pipetwin calibrate SCENARIO --from MEASURED.timeline... [-o OUT]`: the scenario's
// costs, links, interference and dispatch fitted to measured runs of it
// (sim/fit/trace_fit.h). Needs no
// real backend: it reads a timeline that `pipetwin run --timeline` wrote.
#pragma once

#include <string>
#include <vector>

#include "scenario.pb.h"

namespace pipetwin {

struct FittedScenario {
  proto::Scenario scenario;
  std::string header;  // comment lines: what was fitted, and how it simulates the runs
};

// The scenario (with `overrides`) fitted to the runs in `timeline_paths`, each a run of it.
FittedScenario fit_scenario_to_runs(const std::string& scenario,
                                    const std::vector<std::string>& overrides,
                                    const std::vector<std::string>& timeline_paths,
                                    const std::vector<std::string>& resized_paths = {});

// Writes the fitted scenario to `output` (stdout when empty) and reports on stderr how
// the fitted scenario simulates the run it was fitted on.
void calibrate_from_trace(const std::string& scenario, const std::vector<std::string>& overrides,
                          const std::vector<std::string>& timeline_paths,
                          const std::string& output);

}  // namespace pipetwin
