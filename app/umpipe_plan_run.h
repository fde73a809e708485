// `plan --search umpipe`, computed once: the command line prints it (a table or --json,
// and --write-plan) and the Python module returns the same JSON object.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>

#include "sim/driver/resource_limits.h"
#include "sim/scenario/loaded_scenario.h"
#include "sim/spec/resolved_scenario.h"
#include "sim/umpipe/full_model_check.h"
#include "sim/umpipe/umpipe_search.h"

namespace pipetwin {

struct UmpipePlanRequest {
  int32_t population = 256;
  int32_t generations = 100;
  uint64_t seed = 1;
  int threads = 0;  // 0: one per CPU
  int32_t max_microbatches = 0;
  double min_gain = 0.05;
  ResourceLimits limits;
  bool progress = true;  // draw a progress bar on stderr when it is a terminal
};

struct UmpipePlanRun {
  UmpipePlanRequest request;
  ResolvedScenario setup;
  UmpipeSearchResult result;
  // With dispatch gaps or interference: the plan chosen under the full model, which is
  // then the one `written` holds.
  std::optional<FullModelChoice> choice;
  UmpipeSearchResult written;

  // The object `plan --search umpipe --json` prints.
  nlohmann::json json() const;
};

// baseline / best - 1: how much faster the plan runs than the baseline.
double gain(double baseline_s, double best_s);

// Throws InputError for options that leave nothing to search, before anything loads.
void check_umpipe_options(const UmpipePlanRequest& request);

// Searches the loaded scenario's plan. Throws InputError for bad input.
UmpipePlanRun run_umpipe_plan(const LoadedScenario& loaded, const UmpipePlanRequest& request);

}  // namespace pipetwin
