#include "app/umpipe_plan_run.h"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <string>

#include "sim/scenario/resolve_scenario.h"
#include "sim/spec/errors.h"
#include "sim/sweep/progress_bar.h"

namespace pipetwin {
namespace {

// The search holds two generations of plans, each a forward and a backward cut per stage
// of up to --max-microbatches (default: one per sample) sizes; the full-model check
// simulates the scenario itself.
void check_search_size(const UmpipePlanRequest& args, const ResolvedScenario& setup) {
  check_resource_limits(setup, args.limits, {Engine::kAnalytic, false});
  const double cuts = args.max_microbatches > 0 ? args.max_microbatches
                                                : static_cast<double>(setup.training.global_batch) /
                                                      std::max(1, setup.training.data_parallel);
  const double bytes = 2.0 * args.population * setup.schedule.chunks() * 2 * cuts * 4;
  if (bytes > args.limits.max_memory_bytes) {
    throw InputError("--population " + std::to_string(args.population) +
                     ": the search would hold " +
                     std::to_string(static_cast<long long>(bytes / (1 << 20))) +
                     " MiB of plans, more than --max-memory; lower --population or "
                     "--max-microbatches, or raise --max-memory");
  }
}

nlohmann::json sizes_json(const std::vector<int32_t>& sizes) {
  nlohmann::json list = nlohmann::json::array();
  for (int32_t size : sizes) list.push_back(size);
  return list;
}

nlohmann::json unequal_plan_json(const UnequalPlan& plan) {
  nlohmann::json stages = nlohmann::json::array();
  for (size_t s = 0; s < plan.stages.size(); ++s) {
    stages.push_back({{"stage", s},
                      {"forward_sizes", sizes_json(plan.stages[s].forward_sizes)},
                      {"backward_sizes", sizes_json(plan.stages[s].backward_sizes)}});
  }
  return stages;
}

nlohmann::json result_json(const ResolvedScenario& setup, const UmpipeSearchResult& result,
                           const UmpipePlanRequest& args) {
  const UmpipeBaselineResults& b = result.baselines;
  nlohmann::json baselines = {{"gpipe", b.gpipe_s},
                              {"one_f_one_b", b.one_f_one_b_s},
                              {"local_greedy", b.local_greedy_s},
                              {"global_dp", b.global_dp.seconds}};
  if (b.exhaustive) baselines["exhaustive"] = b.exhaustive->seconds;
  nlohmann::json gains = nlohmann::json::object();
  for (const auto& [name, seconds] : baselines.items()) {
    gains[name] = gain(seconds.get<double>(), result.best_s);
  }
  return {{"scenario", setup.name},
          {"search", "umpipe"},
          {"stages", setup.schedule.stages},
          {"global_batch", setup.training.global_batch},
          {"microbatches", setup.training.microbatches},
          {"best_s", result.best_s},
          {"baselines", baselines},
          {"gains", gains},
          {"global_dp_microbatches", b.global_dp.microbatches},
          {"plan", unequal_plan_json(result.best)},
          {"local_greedy_plan", unequal_plan_json(b.local_greedy_plan)},
          {"population", args.population},
          {"generations", args.generations},
          {"seed", args.seed},
          {"max_microbatches", result.max_microbatches},
          {"evaluations", result.dgap.evaluations},
          {"history_s", result.dgap.history},
          {"search_wall_s", result.search_wall_s}};
}

nlohmann::json full_model_json(const FullModelChoice& choice) {
  nlohmann::json candidates = nlohmann::json::object();
  for (const auto& [name, seconds] : choice.candidates) {
    candidates[name] = std::isfinite(seconds) ? nlohmann::json(seconds) : nlohmann::json(nullptr);
  }
  return {{"chosen", choice.chosen},
          {"min_gain", choice.min_gain},
          {"iteration_s", choice.seconds},
          {"candidates_s", candidates},
          {"plan", unequal_plan_json(choice.plan)}};
}

}  // namespace

double gain(double baseline_s, double best_s) { return baseline_s / best_s - 1; }

void check_umpipe_options(const UmpipePlanRequest& request) {
  if (request.population < 2) {
    throw InputError("nothing to search: --population must be at least 2, not " +
                     std::to_string(request.population));
  }
  if (request.generations < 1) {
    throw InputError("nothing to search: --generations must be at least 1, not " +
                     std::to_string(request.generations));
  }
  if (request.threads < 0) throw InputError("--threads must not be negative");
  if (request.max_microbatches < 0) throw InputError("--max-microbatches must not be negative");
}

UmpipePlanRun run_umpipe_plan(const LoadedScenario& loaded, const UmpipePlanRequest& request) {
  check_umpipe_options(request);
  UmpipePlanRun run;
  run.request = request;
  run.setup = resolve_scenario(loaded);
  const ResolvedScenario& setup = run.setup;
  check_search_size(request, setup);

  UmpipeSearchOptions options;
  options.dgap.population = request.population;
  options.dgap.generations = request.generations;
  options.dgap.seed = request.seed;
  options.dgap.max_microbatches = request.max_microbatches;
  options.threads = request.threads;
  ProgressBar progress(std::cerr, static_cast<size_t>(request.generations),
                       request.progress && ProgressBar::stderr_is_terminal());
  options.dgap.progress = [&](int32_t generation, double) {
    progress.update(static_cast<size_t>(generation));
  };
  run.result = search_umpipe(setup, options);
  progress.clear();

  // On a fitted scenario (dispatch gaps) or with interference, the plan written is the
  // fastest under the full model, by a margin.
  run.written = run.result;
  if (evaluator_misses_model(setup)) {
    run.choice = choose_with_full_model(setup, run.result, request.min_gain);
    run.written.best = run.choice->plan;
    run.written.best_s = run.choice->seconds;
  }
  return run;
}

nlohmann::json UmpipePlanRun::json() const {
  nlohmann::json j = result_json(setup, result, request);
  if (choice) j["full_model"] = full_model_json(*choice);
  return j;
}

}  // namespace pipetwin
