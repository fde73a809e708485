// Validates a loaded scenario and resolves it into a ResolvedScenario. Every rule that a scenario
// can break is checked here, before any program is built, and reported with the file,
// the line and the field.
#pragma once

#include "sim/scenario/loaded_scenario.h"
#include "sim/spec/resolved_scenario.h"

namespace pipetwin {

// Throws InputError.
ResolvedScenario resolve_scenario(const LoadedScenario& loaded);

}  // namespace pipetwin
