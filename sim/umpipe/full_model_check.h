// The UMPIPE search scores plans with the fast PlanEvaluator, which equals the analytic
// executor, dispatch gaps included, but leaves out interference between compute and
// transfers; and a fitted model predicts best the configuration it was fitted on. So on
// such scenarios the search's plan and the baselines' plans are simulated with the full
// model, and the fastest of them (by a margin, below) is the one to run.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "sim/spec/resolved_scenario.h"
#include "sim/umpipe/umpipe_search.h"

namespace pipetwin {

struct FullModelChoice {
  std::string chosen;  // "search", "local greedy", "global greedy DP" or "GPipe"
  UnequalPlan plan;
  double seconds = 0;   // one iteration, full model
  double min_gain = 0;  // what a plan had to gain over the scenario's own to be chosen
  // Every candidate's iteration time under the full model (+inf: it does not fit).
  std::vector<std::pair<std::string, double>> candidates;
};

// Whether the search's plan is checked with the full model: where the scenario models
// interference (the evaluator leaves it out) or host-side dispatch gaps (what `pipetwin
// calibrate --from` fits: a fitted scenario, whose own configuration is its best prediction).
bool evaluator_misses_model(const ResolvedScenario& setup);

// The fastest of the search's plan and the baselines' plans, each lowered to a Program
// and simulated (analytic engine, one iteration, with dispatch and interference). Any
// plan but the scenario's own (GPipe order, its microbatches) must beat it by `min_gain`
// (0.05: 5%) to be chosen: a fitted model predicts best the configuration it was fitted
// on, and a gain smaller than its error elsewhere is not worth the risk of a slower run.
FullModelChoice choose_with_full_model(const ResolvedScenario& setup,
                                       const UmpipeSearchResult& result, double min_gain);

}  // namespace pipetwin
