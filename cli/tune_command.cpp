// `pipetwin tune [SCENARIO] [--fix FIELD=VALUE[,VALUE...]]... [--max-memory GIB]
//                [--refine K] [--simgrid N] [--max-instructions N] [-j N] [--set PATH=VALUE]...
//                [--json]
//                [--write-scenario FILE] [--report FILE.html]`
//
// Searches the configuration of the scenario's model, cluster and global batch
// (docs/tune.md): tensor, context, pipeline, data and expert parallelism, virtual stages,
// microbatch size, schedule, recomputation, ZeRO stage, offload. Prints the best, the
// scenario's own, and the Pareto front of throughput against peak memory.
#include <iostream>
#include <memory>

#include "app/tune_run.h"
#include "app/tune_summary.h"
#include "cli/cli_app.h"
#include "report/html_page.h"
#include "report/tune_page.h"
#include "sim/driver/resource_limits.h"
#include "sim/scenario/loaded_scenario.h"
#include "sim/tune/tune_space.h"

namespace pipetwin {
namespace {

struct TuneArgs {
  std::string scenario;
  std::vector<std::string> fixes;
  std::vector<std::string> overrides;
  double max_memory_gib = 0;
  int32_t refine = 10;
  int32_t simgrid = 2;
  int32_t jobs = 0;
  int64_t max_instructions = ResourceLimits{}.max_instructions;
  bool json = false;
  std::string write_scenario;
  std::string report_path;
};

void run(const TuneArgs& args) {
  if (!args.report_path.empty()) check_report_path(args.report_path);
  const LoadedScenario loaded = load_scenario(args.scenario, args.overrides);
  TuneRunOptions options;
  options.search.fixes = args.fixes;
  options.search.max_memory_bytes = args.max_memory_gib * 1024.0 * 1024.0 * 1024.0;
  options.search.refine = args.refine;
  options.search.workers = args.jobs;
  options.search.limits.max_instructions = args.max_instructions;
  options.simgrid = args.simgrid;
  const TuneRun run = run_tune(loaded, options);
  if (!args.write_scenario.empty()) write_best_scenario(loaded, run, args.write_scenario);
  if (!args.report_path.empty()) {
    HtmlPage page("pipetwin tune: " + run.scenario,
                  std::to_string(run.result.evaluated) + " configurations evaluated");
    add_tune_sections(page, run.result, run.simgrid);
    write_html_report(args.report_path, page);
  }
  if (args.json) {
    std::cout << tune_json(run).dump(2) << "\n";
  } else {
    print_tune_summary(std::cout, run);
    if (!args.report_path.empty()) std::cout << "\nreport written to " << args.report_path << "\n";
  }
}

}  // namespace

void add_tune_command(CLI::App& app) {
  auto args = std::make_shared<TuneArgs>();
  CLI::App* cmd =
      app.add_subcommand("tune", "search the fastest configuration within the memory limit");
  cmd->add_option("scenario", args->scenario,
                  "scenario .textproto, or builtin:NAME (default: the built-in quickstart)");
  std::string fields;
  for (const std::string& f : tune_field_names()) fields += (fields.empty() ? "" : ", ") + f;
  cmd->add_option("--fix", args->fixes,
                  "pin a choice to one value or a list: FIELD=V[,V...] (repeatable); FIELD is "
                  "one of " +
                      fields)
      ->allow_extra_args(false);
  cmd->add_option("--set", args->overrides, "change the scenario first: PATH=VALUE (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--max-memory", args->max_memory_gib,
                  "peak GPU memory allowed, GiB (default: the smallest GPU's memory)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--refine", args->refine,
                  "how many of the fast evaluator's best the analytic engine simulates")
      ->default_val(args->refine)
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--simgrid", args->simgrid,
                  "how many of the analytic engine's best SimGrid also simulates")
      ->default_val(args->simgrid)
      ->check(CLI::Range(0, 1000));
  cmd->add_option("-j,--jobs", args->jobs,
                  "processes for the fast evaluation (default: the number of CPUs)")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--max-instructions", args->max_instructions,
                  "simulate no configuration whose Program would be larger (the scenario's "
                  "own must fit)")
      ->default_val(args->max_instructions)
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--json", args->json, "print one JSON object instead of the summary");
  cmd->add_option("--write-scenario", args->write_scenario,
                  "write the scenario with the best configuration applied");
  cmd->add_option("--report", args->report_path,
                  "write a self-contained HTML report with the Pareto front");
  cmd->callback([args] { run(*args); });
}

}  // namespace pipetwin
