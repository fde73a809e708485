// The scenario's `run` section: what `pipetwin goodput` needs beyond one step.
#pragma once

#include "sim/goodput/run_spec.h"
#include "sim/scenario/scenario_checker.h"

namespace pipetwin {

// Checks every field (the file, line and field of the first bad one: InputError) and fills the
// defaults: Llama 3's failure rates, the checkpoint and restart figures of docs/goodput.md.
RunSpec resolve_run(const ScenarioChecker& check, const proto::Scenario& scenario);

}  // namespace pipetwin
