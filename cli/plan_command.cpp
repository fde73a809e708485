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
#include <string>

#include "app/plan_pipedream.h"
#include "app/umpipe_plan_files.h"
#include "app/umpipe_plan_run.h"
#include "cli/cli_app.h"
#include "cli/resource_options.h"
#include "report/html_page.h"
#include "report/plan_page.h"
#include "report/text_units.h"
#include "sim/scenario/loaded_scenario.h"
#include "sim/scenario/scenario_writer.h"
#include "sim/spec/errors.h"

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

std::string gain_text(double baseline_s, double best_s) {
  return format_number("%+.2f%%", 100 * gain(baseline_s, best_s));
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

UmpipePlanRequest umpipe_request(const PlanArgs& args) {
  return {.population = args.population,
          .generations = args.generations,
          .seed = args.seed,
          .threads = args.threads,
          .max_microbatches = args.max_microbatches,
          .min_gain = args.min_gain,
          .limits = args.resources.limits()};
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
  const UmpipePlanRequest request = umpipe_request(args);
  check_umpipe_options(request);
  if (!args.report_path.empty()) check_report_path(args.report_path);
  const LoadedScenario loaded = load_scenario(args.scenario, args.overrides);
  const UmpipePlanRun run = run_umpipe_plan(loaded, request);
  if (!args.write_plan.empty()) {
    write_umpipe_plan_file(args.write_plan, loaded, run.written, request, args.overrides);
  }
  if (!args.report_path.empty())
    write_umpipe_report(args.report_path, run.setup, request, run.result);
  if (args.json) {
    std::cout << run.json().dump(2) << "\n";
  } else {
    print_result(std::cout, run.setup, run.result, args);
    if (run.choice) print_full_model(std::cout, *run.choice);
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
