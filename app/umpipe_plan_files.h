// The files `plan --search umpipe` writes: the scenario with the best plan as its schedule
// (--write-plan, for `simulate`) and the search as an HTML page (--report).
#pragma once

#include <string>
#include <vector>

#include "app/umpipe_plan_run.h"
#include "scenario.pb.h"
#include "sim/scenario/loaded_scenario.h"
#include "sim/spec/resolved_scenario.h"
#include "sim/umpipe/umpipe_search.h"

namespace pipetwin {

// The scenario as loaded, with the plan as its schedule: kind UMPIPE, the placement the
// plan was made for, one stage plan per stage. Everything else (training.microbatches
// too: explicit layers' costs may refer to it) stays as it was.
proto::Scenario scenario_with_plan(const LoadedScenario& loaded, const UmpipeSearchResult& result);

// That scenario, headed by the command line that finds the plan again (the request's
// population, generations and seed, and the --set `overrides`).
void write_umpipe_plan_file(const std::string& path, const LoadedScenario& loaded,
                            const UmpipeSearchResult& result, const UmpipePlanRequest& request,
                            const std::vector<std::string>& overrides);

// The search's convergence, the plan and the baselines as a page.
void write_umpipe_report(const std::string& path, const ResolvedScenario& setup,
                         const UmpipePlanRequest& request, const UmpipeSearchResult& result);

}  // namespace pipetwin
