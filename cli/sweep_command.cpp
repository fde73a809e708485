// `pipetwin sweep [SCENARIO] --vary PATH=V1,V2,... [--vary ...] [--set PATH=VALUE]...
//                 [--engine analytic|simgrid] [--json] [--csv FILE] [-j N] [--allow-oom]
//                 [--shard K/N] [--report FILE.html]`
// `pipetwin sweep merge A.csv B.csv ... -o ALL.csv` joins the CSVs of the shards.
//
// Runs every point of the cartesian product of the --vary lists, each in its own child
// process (SimGrid allows one engine per process), and prints them fastest first. Every
// point is loaded and validated before anything runs, so a typo costs no simulation time.
#include <cstdlib>
#include <iostream>
#include <memory>

#include "app/sweep_merge.h"
#include "app/sweep_run.h"
#include "app/sweep_summary.h"
#include "cli/cli_app.h"
#include "cli/resource_options.h"
#include "report/html_page.h"
#include "report/sweep_page.h"
#include "sim/spec/errors.h"
#include "sim/sweep/shard.h"
#include "traces/atomic_file.h"

namespace pipetwin {
namespace {

struct SweepArgs {
  std::string scenario;
  std::vector<std::string> vary;
  std::vector<std::string> overrides;
  std::string engine = "analytic";
  std::string csv_path;
  std::string report_path;
  int jobs = 0;  // 0: one per available CPU
  bool json = false;
  bool allow_oom = false;
  int64_t max_points = 100000;
  std::string shard;  // "K/N"; empty: the Slurm array's task, or the whole grid
  ResourceOptions resources;
};

Shard shard_of(const SweepArgs& args) {
  if (!args.shard.empty()) return parse_shard(args.shard);
  return shard_from_slurm([](const char* name) { return std::getenv(name); }).value_or(Shard{});
}

void run_sweep(const SweepArgs& args) {
  if (!args.report_path.empty()) check_report_path(args.report_path);
  const SweepOutcome outcome = run_sweep_grid({.scenario = args.scenario,
                                               .vary = args.vary,
                                               .overrides = args.overrides,
                                               .engine = args.engine,
                                               .jobs = args.jobs,
                                               .allow_oom = args.allow_oom,
                                               .max_points = args.max_points,
                                               .shard = shard_of(args),
                                               .limits = args.resources.limits()});
  const std::vector<SweepRow>& rows = outcome.rows;
  if (!args.csv_path.empty()) {
    write_file_atomically(args.csv_path,
                          [&](std::ostream& out) { write_sweep_csv(out, outcome.paths, rows); });
  }
  if (!args.report_path.empty()) {
    std::string varied;
    for (const std::string& path : outcome.paths) varied += (varied.empty() ? "" : ", ") + path;
    HtmlPage page(
        "pipetwin sweep: " + (args.scenario.empty() ? "quickstart" : args.scenario),
        std::to_string(rows.size()) + " points varying " + varied + ", engine " + args.engine);
    add_sweep_sections(page, outcome.paths, rows);
    write_html_report(args.report_path, page);
  }
  if (args.json) {
    std::cout << sweep_json(rows).dump(2) << "\n";
  } else {
    print_sweep_table(std::cout, outcome.paths, rows);
    if (!args.csv_path.empty()) std::cout << "\nCSV written to " << args.csv_path << "\n";
    if (!args.report_path.empty()) std::cout << "report written to " << args.report_path << "\n";
  }
  if (outcome.failed > 0) {
    std::cout.flush();
    throw RuntimeFailure(std::to_string(outcome.failed) + " of " + std::to_string(rows.size()) +
                         " points failed (their rows say why)");
  }
}

}  // namespace

void add_sweep_command(CLI::App& app) {
  auto args = std::make_shared<SweepArgs>();
  CLI::App* cmd = app.add_subcommand("sweep", "simulate a what-if grid of scenario variants");
  cmd->add_option("scenario", args->scenario,
                  "scenario .textproto, or builtin:NAME (default: the built-in quickstart)");
  // One value per --vary/--set, so that a scenario path after them stays positional.
  cmd->add_option("--vary", args->vary,
                  "vary a field: PATH=V1,V2,... (repeatable; commas inside [] {} or quotes do not "
                  "split, and a top-level ';' splits instead of commas)")
      ->allow_extra_args(false);
  cmd->add_option("--set", args->overrides, "fix a field at every point: PATH=VALUE (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--engine", args->engine, "executor of every point")->default_val("analytic");
  cmd->add_option("--max-points", args->max_points, "refuse grids with more points")
      ->default_val(args->max_points)
      ->check(CLI::PositiveNumber);
  add_resource_options(cmd, &args->resources);
  cmd->add_option("--csv", args->csv_path, "also write the rows as CSV (after every point ran)");
  cmd->add_option("--report", args->report_path,
                  "write a self-contained HTML report: a chart per metric and varied field");
  cmd->add_option("-j,--jobs", args->jobs, "points run at once (default: the number of CPUs)")
      ->check(CLI::Range(1, 4096));
  cmd->add_flag("--json", args->json, "print a JSON array of points instead of the table");
  cmd->add_flag("--allow-oom", args->allow_oom,
                "report points out of memory instead of failing them");
  cmd->add_option("--shard", args->shard,
                  "run only the K-th of N slices of the grid, K/N with 0 <= K < N (default: the "
                  "Slurm array task, SLURM_ARRAY_TASK_ID of SLURM_ARRAY_TASK_COUNT)");
  CLI::App* merge = add_sweep_merge_command(*cmd);
  cmd->callback([args, merge] {
    if (merge->parsed()) return;  // `sweep merge` did the work
    run_sweep(*args);
  });
}

}  // namespace pipetwin
