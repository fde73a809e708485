// `pipetwin whatif`: a measured job's slowdown from stragglers and who caused it
// (analysis/whatif.h), as text and as the JSON object `--json` prints.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "analysis/whatif.h"

namespace pipetwin {

// Keys: step_s (measured), replayed_step_s, no_delay_step_s, ideal_step_s, slowdown,
// launch_slowdown, step_slowdown, by_stage, by_dp_rank, by_op (each a map to a slowdown).
nlohmann::json whatif_json(const WhatIfResult& result);

void print_whatif(std::ostream& out, const WhatIfResult& result);

}  // namespace pipetwin
