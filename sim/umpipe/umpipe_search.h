// The UMPIPE planner for one scenario: every baseline, then DGAP seeded with the baselines'
// plans, all scored by the fast PlanEvaluator (bit-equal to the analytic executor). What
// `pipetwin plan --search umpipe` runs.
#pragma once

#include <cstdint>
#include <optional>

#include "sim/spec/resolved_scenario.h"
#include "sim/spec/unequal_plan.h"
#include "sim/umpipe/baselines.h"
#include "sim/umpipe/dgap.h"

namespace pipetwin {

struct UmpipeSearchOptions {
  // population, generations, seed, rates, progress; dgap.max_microbatches 0 means
  // default_max_microbatches(setup). dgap.feasible is used as given.
  DgapOptions dgap;
  int threads = 0;  // evaluation threads, 0: hardware concurrency
  int64_t exhaustive_limit = kExhaustiveLimit;
};

struct UmpipeBaselineResults {
  double gpipe_s = 0;  // equal plan, the scenario's microbatches, GPipe order
  UnequalPlan gpipe_plan;
  double one_f_one_b_s = 0;  // the scenario's microbatches, 1F1B order (simulated)
  double local_greedy_s = 0;
  UnequalPlan local_greedy_plan;
  GlobalDpResult global_dp;
  std::optional<ExhaustiveResult> exhaustive;  // when the space is small
};

struct UmpipeSearchResult {
  UnequalPlan best;
  double best_s = 0;  // one iteration
  UmpipeBaselineResults baselines;
  DgapResult dgap;
  int32_t max_microbatches = 0;    // the cap the search used
  std::vector<int32_t> partition;  // layers per stage the plan was made for
  double search_wall_s = 0;        // baselines + search
};

// The cap on microbatches per stage and direction when none is given: the batch, but at
// most max(64, the scenario's microbatches).
int32_t default_max_microbatches(const ResolvedScenario& setup);

// Throws InputError for a scenario the planner cannot take (data_parallel > 1, virtual
// stages), nothing to search (1 stage and a batch of 1), or bad options (population < 2,
// generations < 1, a cap above the batch).
UmpipeSearchResult search_umpipe(const ResolvedScenario& setup, const UmpipeSearchOptions& options);

}  // namespace pipetwin
