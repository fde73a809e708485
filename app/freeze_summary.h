// The phases of a FreezePipe training run, simulated or measured, as a table and as
// JSON (`phases` and `freeze_events`), so both commands report them alike.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <vector>

#include "sim/freeze/training_run.h"

namespace pipetwin {

// {"phases": [...], "freeze_events": [...]}; migrations[k] precedes phases[k + 1].
nlohmann::json freeze_run_json(const std::vector<TrainingPhase>& phases,
                               const std::vector<Migration>& migrations);

void print_freeze_phases(std::ostream& out, const std::vector<TrainingPhase>& phases,
                         const std::vector<Migration>& migrations);

// AutoCache (freeze.autocache) of a simulated run: when each cache serves, its size in host
// memory and the bytes it sends to the devices per iteration.
nlohmann::json autocache_json(const ResolvedScenario& setup, const TrainingRun& run);
void print_autocache(std::ostream& out, const ResolvedScenario& setup, const TrainingRun& run);

}  // namespace pipetwin
