// What asynchronous pipelines add to a report: weight staleness, the versions each stage
// keeps, and the steady-state rate (fill and drain excluded), which is what asynchrony
// buys. Reported for every schedule, so that synchronous ones compare (staleness 0).
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "sim/driver/simulate.h"

namespace pipetwin {

// "weight_staleness" {max, mean}, "weight_versions" (per stage), "steady_state_iteration_s",
// "steady_state_throughput_samples_per_s".
nlohmann::json pipeline_versions_json(const SimulationResult& result);

// Two lines for the human report.
void print_pipeline_versions(std::ostream& out, const SimulationResult& result);

}  // namespace pipetwin
