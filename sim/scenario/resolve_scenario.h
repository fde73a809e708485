// Validates a loaded scenario and resolves it into a Setup. Every rule that a scenario
// can break is checked here, before any program is built, and reported with the file,
// the line and the field.
#pragma once

#include "sim/scenario/loaded_scenario.h"
#include "sim/scenario/setup.h"

namespace pipetwin {

// Throws InputError.
Setup resolve_scenario(const LoadedScenario& loaded);

}  // namespace pipetwin
