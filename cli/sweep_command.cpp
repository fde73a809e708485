// `pipetwin sweep [SCENARIO] --vary PATH=V1,V2,... [--vary ...] [--set PATH=VALUE]...
//                 [--engine analytic|simgrid] [--json] [--csv FILE] [-j N] [--allow-oom]
//                 [--shard K/N] [--report FILE.html]`
// `pipetwin sweep merge A.csv B.csv ... -o ALL.csv` joins the CSVs of the shards.
//
// Runs every point of the cartesian product of the --vary lists, each in its own child
// process (SimGrid allows one engine per process), and prints them fastest first. Every
// point is loaded and validated before anything runs, so a typo costs no simulation time.
#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <memory>

#include "analysis/metrics.h"
#include "cli/cli_app.h"
#include "cli/resource_options.h"
#include "cli/sweep_merge.h"
#include "cli/sweep_report.h"
#include "report/html_page.h"
#include "report/sweep_page.h"
#include "sim/scenario/resolve_scenario.h"
#include "sim/simulate.h"
#include "sim/spec/errors.h"
#include "sim/sweep/fork_pool.h"
#include "sim/sweep/point_result.h"
#include "sim/sweep/progress_bar.h"
#include "sim/sweep/shard.h"
#include "sim/sweep/sweep_grid.h"
#include "sim/sweep/sweep_row.h"
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

struct PreparedPoint {
  SweepPoint point;
  LoadedScenario loaded;
  int64_t index = 0;  // in grid order
};

Shard shard_of(const SweepArgs& args) {
  if (!args.shard.empty()) return parse_shard(args.shard);
  return shard_from_slurm([](const char* name) { return std::getenv(name); }).value_or(Shard{});
}

// Loads and validates every point here, in the parent: bad input must stop the sweep
// before any point runs, with exit code 2 and the point named.
std::vector<PreparedPoint> prepare_points(const SweepArgs& args, std::vector<std::string>& paths,
                                          int64_t& grid_points) {
  std::vector<VaryAxis> axes;
  for (const std::string& text : args.vary) axes.push_back(parse_vary(text));
  for (const VaryAxis& axis : axes) paths.push_back(axis.path);
  parse_engine(args.engine);  // a bad name stops the sweep before any point runs
  double points = 1;
  for (const VaryAxis& axis : axes) points *= static_cast<double>(axis.values.size());
  if (points > static_cast<double>(args.max_points)) {
    throw InputError("the grid has " + std::to_string(static_cast<long long>(points)) +
                     " points, more than --max-points " + std::to_string(args.max_points) +
                     ": vary fewer fields or fewer values, or raise --max-points");
  }
  const Shard shard = shard_of(args);
  std::vector<SweepPoint> grid = cartesian_product(axes, args.overrides);
  grid_points = static_cast<int64_t>(grid.size());
  std::vector<PreparedPoint> prepared;
  for (int64_t index = 0; index < grid_points; ++index) {
    if (!shard.holds(index)) continue;  // another shard's: it checks and runs it
    SweepPoint& point = grid[static_cast<size_t>(index)];
    try {
      LoadedScenario loaded = load_scenario(args.scenario, point_overrides(args.overrides, point));
      check_resource_limits(resolve_scenario(loaded), args.resources.limits());
      prepared.push_back({std::move(point), std::move(loaded), index});
    } catch (const InputError& e) {
      throw InputError("point " + point_name(point) + ": " + e.what());
    }
  }
  return prepared;
}

// Runs in the child: everything it learns goes into the result, nothing escapes.
PointResult run_point(const LoadedScenario& loaded, const SweepArgs& args) {
  PointResult r;
  try {
    const SimulationResult result =
        simulate(loaded, {parse_engine(args.engine), args.allow_oom, args.resources.limits()});
    const RunMetrics metrics = compute_metrics(result.timeline, result.setup.training.iterations,
                                               result.setup.training.global_batch);
    r.out_of_memory = !result.out_of_memory.empty();
    r.status = r.out_of_memory ? PointStatus::kOutOfMemory : PointStatus::kOk;
    r.iteration_time_s = metrics.iteration_time_s;
    r.throughput_samples_per_s = metrics.throughput_samples_per_s;
    r.bubble_ratio = metrics.bubble_ratio;
    for (const DeviceMetrics& d : metrics.devices) {
      r.peak_memory_bytes = std::max(r.peak_memory_bytes, d.peak_memory_bytes);
    }
  } catch (const InputError& e) {
    r = PointResult{.status = PointStatus::kInputError, .error = e.what()};
  } catch (const std::exception& e) {  // RuntimeFailure (out of memory), or a bug
    r = PointResult{.status = PointStatus::kRuntimeError, .error = e.what()};
  }
  return r;
}

// What the parent makes of a finished child: its result, or why there is none.
PointResult collect(const ChildExit& exit) {
  if (exit.exited_cleanly()) {
    if (auto result = decode_point_result(exit.output)) return *result;
    return PointResult{.status = PointStatus::kCrashed,
                       .error = "the point's process sent an unreadable result"};
  }
  return PointResult{.status = PointStatus::kCrashed,
                     .error = "the point's process " + describe_child_exit(exit.wait_status) +
                              " before sending a result"};
}

void run_sweep(const SweepArgs& args) {
  if (args.vary.empty()) throw InputError("--vary is required: the fields to vary, PATH=V1,V2,...");
  if (!args.report_path.empty()) check_report_path(args.report_path);
  std::vector<std::string> paths;
  int64_t grid_points = 0;
  std::vector<PreparedPoint> prepared = prepare_points(args, paths, grid_points);

  std::vector<SweepRow> rows(prepared.size());
  ProgressBar progress(std::cerr, prepared.size(), ProgressBar::stderr_is_terminal());
  size_t done = 0;
  progress.update(done);
  run_in_children(
      prepared.size(), args.jobs > 0 ? args.jobs : available_cpus(),
      [&](size_t i) { return encode_point_result(run_point(prepared[i].loaded, args)); },
      [&](size_t i, ChildExit exit) {
        rows[i] = {prepared[i].point, collect(exit), prepared[i].index, grid_points};
        progress.update(++done);
      });
  progress.clear();

  sort_by_iteration_time(rows);
  if (!args.csv_path.empty()) {
    write_file_atomically(args.csv_path,
                          [&](std::ostream& out) { write_sweep_csv(out, paths, rows); });
  }
  if (!args.report_path.empty()) {
    std::string varied;
    for (const std::string& path : paths) varied += (varied.empty() ? "" : ", ") + path;
    HtmlPage page(
        "pipetwin sweep: " + (args.scenario.empty() ? "quickstart" : args.scenario),
        std::to_string(rows.size()) + " points varying " + varied + ", engine " + args.engine);
    add_sweep_sections(page, paths, rows);
    write_html_report(args.report_path, page);
  }
  if (args.json) {
    std::cout << sweep_json(rows).dump(2) << "\n";
  } else {
    print_sweep_table(std::cout, paths, rows);
    if (!args.csv_path.empty()) std::cout << "\nCSV written to " << args.csv_path << "\n";
    if (!args.report_path.empty()) std::cout << "report written to " << args.report_path << "\n";
  }
  const auto failed = std::count_if(rows.begin(), rows.end(),
                                    [](const SweepRow& row) { return row.result.failed(); });
  if (failed > 0) {
    std::cout.flush();
    throw RuntimeFailure(std::to_string(failed) + " of " + std::to_string(rows.size()) +
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
