// A model layer's measured costs: each direction given one way (fwd_ms, fixed and per-sample,
// or cost_points), and the weight-gradient part of the backward within the whole.
#pragma once

#include <string>

#include "sim/scenario/scenario_checker.h"

namespace pipetwin {

// Throws InputError naming the field at `path` (e.g. "model.layers[3]") at fault.
void check_layer_cost(const ScenarioChecker& check, const proto::Layer& layer,
                      const std::string& path);

}  // namespace pipetwin
