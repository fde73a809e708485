// `pipetwin plan [SCENARIO] --search umpipe [--population N] [--generations N] [--seed S]
//                [--threads N] [--max-microbatches N] [--set PATH=VALUE]... [--json]
//                [--write-plan FILE] [--report FILE.html]`
//
// Searches unequal microbatches per stage (UMPIPE, docs/umpipe.md) with DGAP, seeded
// with every baseline's plan, and reports the best plan with the gain over each baseline.
// --write-plan saves the whole scenario with that plan as its schedule, for `simulate`.

#include <cmath>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "cli/cli_app.h"
#include "cli/plan_pipedream.h"
#include "cli/resource_options.h"
#include "report/html_page.h"
#include "report/plan_page.h"
#include "report/text_units.h"
#include "sim/scenario/loaded_scenario.h"
#include "sim/scenario/resolve_scenario.h"
#include "sim/scenario/scenario_writer.h"
#include "sim/spec/errors.h"
#include "sim/sweep/progress_bar.h"
#include "sim/umpipe/full_model_check.h"
#include "sim/umpipe/umpipe_search.h"

namespace pipetwin {
namespace {

struct PlanArgs {
  std::string scenario;
  std::string search;
  int32_t population = 256;
  int32_t generations = 100;
  uint64_t seed = 1;
  int threads = 0;
  int32_t max_microbatches = 0;
  std::vector<std::string> overrides;
  bool json = false;
  std::string write_plan;
  std::string report_path;
  bool straight = false;
  double min_gain = 0.05;
  ResourceOptions resources;
};

// baseline / best - 1: how much faster the plan runs than the baseline.
double gain(double baseline_s, double best_s) { return baseline_s / best_s - 1; }

std::string gain_text(double baseline_s, double best_s) {
  return format_number("%+.2f%%", 100 * gain(baseline_s, best_s));
}

// The scenario as loaded, with the plan as its schedule: kind UMPIPE, the placement the
// plan was made for, one stage plan per stage. Everything else (training.microbatches
// too: explicit layers' costs may refer to it) stays as it was.
proto::Scenario scenario_with_plan(const LoadedScenario& loaded, const UmpipeSearchResult& result) {
  proto::Scenario scenario = loaded.scenario;
  proto::Schedule* schedule = scenario.mutable_schedule();
  schedule->set_kind(proto::UMPIPE);
  schedule->set_stages(static_cast<int32_t>(result.best.stages.size()));
  schedule->clear_virtual_stages();
  schedule->clear_partition();
  for (int32_t layers : result.partition) schedule->add_partition(layers);
  schedule->clear_stage_plans();
  for (const StagePlan& stage : result.best.stages) {
    proto::StagePlan* plan = schedule->add_stage_plans();
    for (int32_t size : stage.forward_sizes) plan->add_forward_sizes(size);
    for (int32_t size : stage.backward_sizes) plan->add_backward_sizes(size);
  }
  return scenario;
}

// The search holds two generations of plans, each a forward and a backward cut per stage
// of up to --max-microbatches (default: one per sample) sizes; the full-model check
// simulates the scenario itself.
void check_search_size(const PlanArgs& args, const ResolvedScenario& setup) {
  check_resource_limits(setup, args.resources.limits());
  const double cuts = args.max_microbatches > 0 ? args.max_microbatches
                                                : static_cast<double>(setup.training.global_batch) /
                                                      std::max(1, setup.training.data_parallel);
  const double bytes = 2.0 * args.population * setup.schedule.chunks() * 2 * cuts * 4;
  if (bytes > args.resources.limits().max_memory_bytes) {
    throw InputError("--population " + std::to_string(args.population) +
                     ": the search would hold " +
                     std::to_string(static_cast<long long>(bytes / (1 << 20))) +
                     " MiB of plans, more than --max-memory; lower --population or "
                     "--max-microbatches, or raise --max-memory");
  }
}

void write_plan_file(const std::string& path, const LoadedScenario& loaded,
                     const UmpipeSearchResult& result, const PlanArgs& args) {
  std::string overrides;
  for (const std::string& assignment : args.overrides) overrides += " --set " + assignment;
  const std::string header =
      "# UMPIPE plan (the fastest of the search and its baselines, simulated) found by "
      "`pipetwin plan " +
      loaded.source_name + " --search umpipe --population " + std::to_string(args.population) +
      " --generations " + std::to_string(args.generations) + " --seed " +
      std::to_string(args.seed) + overrides + "`: one iteration takes " +
      format_number("%.17g", result.best_s) + " s\n";
  write_scenario(scenario_with_plan(loaded, result), loaded, header, path);
}

nlohmann::json sizes_json(const std::vector<int32_t>& sizes) {
  nlohmann::json list = nlohmann::json::array();
  for (int32_t size : sizes) list.push_back(size);
  return list;
}

nlohmann::json plan_json(const UnequalPlan& plan) {
  nlohmann::json stages = nlohmann::json::array();
  for (size_t s = 0; s < plan.stages.size(); ++s) {
    stages.push_back({{"stage", s},
                      {"forward_sizes", sizes_json(plan.stages[s].forward_sizes)},
                      {"backward_sizes", sizes_json(plan.stages[s].backward_sizes)}});
  }
  return stages;
}

nlohmann::json result_json(const ResolvedScenario& setup, const UmpipeSearchResult& result,
                           const PlanArgs& args) {
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
          {"plan", plan_json(result.best)},
          {"local_greedy_plan", plan_json(b.local_greedy_plan)},
          {"population", args.population},
          {"generations", args.generations},
          {"seed", args.seed},
          {"max_microbatches", result.max_microbatches},
          {"evaluations", result.dgap.evaluations},
          {"history_s", result.dgap.history},
          {"search_wall_s", result.search_wall_s}};
}

void print_result(std::ostream& out, const ResolvedScenario& setup,
                  const UmpipeSearchResult& result, const PlanArgs& args) {
  out << setup.name << ": UMPIPE search, " << setup.schedule.stages << " stages, batch "
      << setup.training.global_batch << ", population " << args.population << ", "
      << args.generations << " generations, seed " << args.seed << ", at most "
      << result.max_microbatches << " microbatches per stage\n"
      << result.dgap.evaluations << " plans evaluated in " << format_seconds(result.search_wall_s)
      << "\n\n";
  out << pad("stage", 7) << "forward / backward microbatch sizes\n";
  for (size_t s = 0; s < result.best.stages.size(); ++s) {
    out << pad(std::to_string(s), 7) << plan_text(result.best.stages[s]) << "\n";
  }
  out << "\n" << pad("iteration time", 16) << format_seconds(result.best_s) << "\n\n";
  const std::vector<std::pair<std::string, double>> rows =
      umpipe_baseline_rows(result, setup.training.microbatches);
  size_t width = 10;
  for (const auto& row : rows) width = std::max(width, row.first.size() + 2);
  out << pad("baseline", width) << pad("iteration time", 16) << "UMPIPE speed-up\n";
  for (const auto& [name, seconds] : rows) {
    out << pad(name, width) << pad(format_seconds(seconds), 16) << gain_text(seconds, result.best_s)
        << "\n";
  }
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
          {"plan", plan_json(choice.plan)}};
}

void print_full_model(std::ostream& out, const FullModelChoice& choice) {
  out << "\nThe scenario has dispatch gaps or interference, which the search's evaluator "
         "leaves out;\nsimulated with them (one iteration; a plan must gain "
      << format_number("%.0f%%", 100 * choice.min_gain)
      << " over the scenario's own microbatches to be chosen):\n";
  for (const auto& [name, seconds] : choice.candidates) {
    out << "  " << pad(name, 18)
        << (std::isfinite(seconds) ? format_seconds(seconds) : std::string("out of memory"))
        << (name == choice.chosen ? "   <- the plan to run" : "") << "\n";
  }
}

void run_plan(const PlanArgs& args) {
  if (args.search == "pipedream") {
    run_pipedream_plan({args.scenario, args.overrides, args.straight, args.json, args.write_plan,
                        args.report_path});
    return;
  }
  if (args.search != "umpipe") {
    throw InputError("--search " + args.search + ": unknown search (available: umpipe, pipedream)");
  }
  // Options first: a typo should not wait for the scenario to load.
  if (args.population < 2) {
    throw InputError("nothing to search: --population must be at least 2, not " +
                     std::to_string(args.population));
  }
  if (args.generations < 1) {
    throw InputError("nothing to search: --generations must be at least 1, not " +
                     std::to_string(args.generations));
  }
  if (args.threads < 0) throw InputError("--threads must not be negative");
  if (args.max_microbatches < 0) throw InputError("--max-microbatches must not be negative");
  if (!args.report_path.empty()) check_report_path(args.report_path);
  const LoadedScenario loaded = load_scenario(args.scenario, args.overrides);
  const ResolvedScenario setup = resolve_scenario(loaded);
  check_search_size(args, setup);

  UmpipeSearchOptions options;
  options.dgap.population = args.population;
  options.dgap.generations = args.generations;
  options.dgap.seed = args.seed;
  options.dgap.max_microbatches = args.max_microbatches;
  options.threads = args.threads;
  ProgressBar progress(std::cerr, static_cast<size_t>(args.generations),
                       ProgressBar::stderr_is_terminal());
  options.dgap.progress = [&](int32_t generation, double) {
    progress.update(static_cast<size_t>(generation));
  };
  const UmpipeSearchResult result = search_umpipe(setup, options);
  progress.clear();

  // With dispatch gaps or interference, the plan written is the fastest under the full model.
  std::optional<FullModelChoice> choice;
  UmpipeSearchResult written = result;
  if (evaluator_misses_model(setup)) {
    choice = choose_with_full_model(setup, result, args.min_gain);
    written.best = choice->plan;
    written.best_s = choice->seconds;
  }
  if (!args.write_plan.empty()) write_plan_file(args.write_plan, loaded, written, args);
  if (!args.report_path.empty()) {
    HtmlPage page(setup.name + ": UMPIPE plan",
                  setup.name + ": UMPIPE search, " + std::to_string(setup.schedule.stages) +
                      " stages, batch " + std::to_string(setup.training.global_batch) +
                      ", population " + std::to_string(args.population) + ", " +
                      std::to_string(args.generations) + " generations, seed " +
                      std::to_string(args.seed));
    page.add_section("Headline numbers",
                     headline_html({{"iteration time", format_seconds(result.best_s)},
                                    {"plans evaluated", std::to_string(result.dgap.evaluations)}}));
    add_umpipe_sections(page, result, setup.training.microbatches);
    write_html_report(args.report_path, page);
  }
  if (args.json) {
    nlohmann::json j = result_json(setup, result, args);
    if (choice) j["full_model"] = full_model_json(*choice);
    std::cout << j.dump(2) << "\n";
  } else {
    print_result(std::cout, setup, result, args);
    if (choice) print_full_model(std::cout, *choice);
    if (!args.write_plan.empty()) {
      std::cout << "\nplan written to " << args.write_plan << " (run it with: pipetwin simulate "
                << args.write_plan << ")\n";
    }
    if (!args.report_path.empty()) {
      std::cout << "\nreport written to " << args.report_path << " (open it in a browser)\n";
    }
  }
}

}  // namespace

void add_plan_command(CLI::App& app) {
  auto args = std::make_shared<PlanArgs>();
  CLI::App* cmd =
      app.add_subcommand("plan",
                         "search a pipeline plan (UMPIPE: unequal microbatches; PipeDream: "
                         "antichain DP partition)");
  cmd->add_option("scenario", args->scenario,
                  "scenario .textproto, or builtin:NAME (default: the built-in quickstart)");
  cmd->add_option("--search", args->search, "what to search: umpipe, pipedream")->required();
  cmd->add_flag("--straight", args->straight,
                "pipedream: one device per stage (no replication inside a stage)");
  cmd->add_option("--population", args->population, "individuals per generation")->default_val(256);
  add_resource_options(cmd, &args->resources);
  cmd->add_option("--generations", args->generations, "generations of the genetic search")
      ->default_val(100);
  cmd->add_option("--seed", args->seed, "random seed (same seed, same plan)")->default_val(1);
  cmd->add_option("--threads", args->threads, "evaluation threads (0: one per CPU)")
      ->default_val(0);
  cmd->add_option("--max-microbatches", args->max_microbatches,
                  "at most this many microbatches per stage and direction (0: the batch, at "
                  "most max(64, training.microbatches))")
      ->default_val(0);
  cmd->add_option("--set", args->overrides, "override a field: PATH=VALUE (repeatable)");
  cmd->add_flag("--json", args->json, "print one JSON object instead of the table");
  cmd->add_option("--min-gain", args->min_gain,
                  "on a scenario with dispatch gaps or interference: what a plan must gain, "
                  "simulated, over the scenario's own microbatches to be written")
      ->default_val(0.05)
      ->check(CLI::Range(0.0, 10.0));
  cmd->add_option("--report", args->report_path,
                  "write a self-contained HTML report: convergence, the plan, the baselines "
                  "(umpipe); the stages and their replicas (pipedream)");
  cmd->add_option("--write-plan", args->write_plan,
                  "write the scenario with the best plan as its schedule (for simulate)");
  cmd->callback([args] { run_plan(*args); });
}

}  // namespace pipetwin
