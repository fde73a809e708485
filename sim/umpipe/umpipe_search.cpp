#include "sim/umpipe/umpipe_search.h"

#include <algorithm>
#include <chrono>
#include <string>

#include "sim/driver/build_program.h"
#include "sim/spec/errors.h"
#include "sim/umpipe/plan_evaluator.h"

namespace pipetwin {

int32_t default_max_microbatches(const ResolvedScenario& setup) {
  return std::min(setup.training.global_batch, std::max(64, setup.training.microbatches));
}

UmpipeSearchResult search_umpipe(const ResolvedScenario& setup,
                                 const UmpipeSearchOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  if (setup.training.data_parallel != 1) {
    throw InputError("UMPIPE planning needs one pipeline: training.data_parallel is " +
                     std::to_string(setup.training.data_parallel) + ", not 1");
  }
  if (setup.schedule.virtual_stages != 1) {
    throw InputError("UMPIPE planning needs schedule.virtual_stages 1, not " +
                     std::to_string(setup.schedule.virtual_stages));
  }
  const int32_t stages = setup.schedule.stages;
  const int32_t batch = setup.training.global_batch;
  if (stages == 1 && batch == 1) {
    throw InputError("nothing to search: one stage and a batch of one sample have one plan");
  }
  if (options.dgap.population < 2) {
    throw InputError("nothing to search: --population must be at least 2, not " +
                     std::to_string(options.dgap.population));
  }
  if (options.dgap.generations < 1) {
    throw InputError("nothing to search: --generations must be at least 1, not " +
                     std::to_string(options.dgap.generations));
  }
  if (options.dgap.max_microbatches < 0 || options.dgap.max_microbatches > batch) {
    throw InputError("--max-microbatches " + std::to_string(options.dgap.max_microbatches) +
                     ": too many microbatches for a batch of " + std::to_string(batch));
  }

  UmpipeSearchResult result;
  result.max_microbatches = options.dgap.max_microbatches > 0 ? options.dgap.max_microbatches
                                                              : default_max_microbatches(setup);
  result.partition = place_layers(setup);

  // The evaluator and the 1F1B baseline see the scenario as an UMPIPE one (the stage plans
  // do not matter to either).
  ResolvedScenario planned = setup;
  planned.schedule.partition = result.partition;
  const PlanEvaluator evaluator(planned);
  const PopulationEvaluate evaluate = [&](std::span<const UnequalPlan> plans,
                                          std::span<double> seconds) {
    evaluator.evaluate(plans, seconds, options.threads);
  };

  UmpipeBaselineResults& baselines = result.baselines;
  baselines.gpipe_plan = equal_plan(stages, batch, setup.training.microbatches);
  baselines.gpipe_s = evaluator.iteration_time(baselines.gpipe_plan);
  baselines.one_f_one_b_s = one_f_one_b_seconds(planned);
  baselines.local_greedy_plan = local_greedy_plan(
      stages, batch, result.max_microbatches,
      [&](int32_t s, int32_t b) { return evaluator.stage_seconds_per_sample(s, b); });
  baselines.local_greedy_s = evaluator.iteration_time(baselines.local_greedy_plan);
  baselines.global_dp = global_dp_plan(evaluate, stages, batch, result.max_microbatches);
  baselines.exhaustive = exhaustive_search(evaluate, stages, batch, result.max_microbatches,
                                           options.exhaustive_limit, options.dgap.feasible);

  // The seeds: every baseline's plan, so that the search never reports worse than one.
  std::vector<UnequalPlan> seeds = {baselines.gpipe_plan, baselines.global_dp.plan,
                                    baselines.local_greedy_plan};
  if (baselines.exhaustive) seeds.insert(seeds.begin(), baselines.exhaustive->plan);
  DgapOptions dgap = options.dgap;
  dgap.max_microbatches = result.max_microbatches;
  result.dgap = run_dgap(evaluate, stages, batch, dgap, seeds);
  result.best = result.dgap.best;
  result.best_s = result.dgap.best_seconds;
  result.search_wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

}  // namespace pipetwin
