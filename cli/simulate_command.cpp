// `pipetwin simulate [SCENARIO] [--engine analytic] [--trace FILE.json] [--timeline FILE]
//                    [--report FILE.html]
//                    [--set PATH=VALUE]... [--json] [--allow-oom] [--steady-state]
//                    [--max-instructions N] [--max-memory GiB] [--chakra DIR]`
#include <iostream>
#include <memory>

#include "analysis/metrics.h"
#include "app/async_summary.h"
#include "app/freeze_summary.h"
#include "app/run_files.h"
#include "app/run_summary.h"
#include "app/simulate_run.h"
#include "cli/cli_app.h"
#include "cli/resource_options.h"
#include "report/freeze_page.h"
#include "report/html_page.h"
#include "report/text_units.h"
#include "sim/spec/errors.h"
#include "sim/driver/steady_state.h"

namespace pipetwin {
namespace {

struct SimulateArgs {
  std::string scenario;
  std::string engine = "analytic";
  std::string trace_path;
  std::string timeline_path;
  std::string chakra_dir;
  std::string report_path;
  std::vector<std::string> overrides;
  bool json = false;
  bool allow_oom = false;
  bool steady_state = false;
  ResourceOptions resources;
};

SimulationOptions simulation_options(const SimulateArgs& args) {
  SimulationOptions options{parse_engine(args.engine), args.allow_oom, args.resources.limits()};
  // The timeline is built only for what draws it; the summary's metrics come from the Program
  // and its times, its link totals from the link statistics.
  options.timeline =
      !args.trace_path.empty() || !args.timeline_path.empty() || !args.report_path.empty();
  return options;
}

// A whole training run with FreezePipe: a phase table.
void print_training(const SimulateArgs& args, const ResolvedScenario& setup,
                    const TrainingRun& run) {
  std::cout << setup.name << ": FreezePipe over " << setup.training.iterations
            << " iterations, engine " << args.engine << "\n\n";
  print_freeze_phases(std::cout, run.phases, run.migrations);
  std::cout << "\n";
  if (setup.freeze.cache_epoch_iterations > 0) print_autocache(std::cout, setup, run);
  std::cout << "training time  " << format_seconds(run.training_time_s) << "\n";
  if (!args.report_path.empty()) {
    std::cout << "\nreport written to " << args.report_path << " (open it in a browser)\n";
  }
}

// --report: the run as a page; a FreezePipe training run as its phases.
void write_report(const SimulateArgs& args, const SimulateRun& run) {
  const ResolvedScenario& setup = run.setup;
  if (run.training) {
    const TrainingRun& training = *run.training;
    HtmlPage page(setup.name + ": pipetwin report", setup.name + ": FreezePipe over " +
                                                        std::to_string(setup.training.iterations) +
                                                        " iterations, engine " + args.engine);
    add_freeze_sections(page, training,
                        {{"training time", format_seconds(training.training_time_s)},
                         {"phases", std::to_string(training.phases.size())},
                         {"migrations", std::to_string(training.migrations.size())}});
    write_html_report(args.report_path, page);
    return;
  }
  std::vector<std::string> notes;
  if (run.extrapolation) {
    notes.push_back("Steady state: " + std::to_string(run.extrapolation->simulated_iterations) +
                    " iterations simulated, every further one adds what the last one added "
                    "(the charts show the simulated ones).");
  }
  write_run_report(args.report_path, *run.result, run.metrics, notes);
}

void run_simulate(const SimulateArgs& args) {
  if (!args.report_path.empty()) check_report_path(args.report_path);
  const SimulateRun run =
      args.chakra_dir.empty()
          ? run_simulation(load_scenario(args.scenario, args.overrides), simulation_options(args))
          : run_chakra_simulation(args.chakra_dir, args.scenario, args.overrides,
                                  simulation_options(args));
  write_run_files(run.timeline(), args.trace_path, args.timeline_path);
  if (!args.report_path.empty()) write_report(args, run);
  std::optional<SteadyStateIteration> steady;
  if (args.steady_state) {
    steady = steady_state_iteration(run.setup, simulation_options(args));
    if (!steady) throw RuntimeFailure("--steady-state: the iterations never settled in 34 of them");
  }
  if (args.json) {
    nlohmann::json j = run.json();
    if (steady) {  // the rate once the iterations settle, not between this run's own
      j["steady_state_iteration_s"] = steady->iteration_s;
      j["steady_state_throughput_samples_per_s"] =
          steady->iteration_s > 0 ? run.setup.training.global_batch / steady->iteration_s : 0;
      j["steady_state_bubble"] = steady->bubble;
    }
    std::cout << j.dump(2) << "\n";
    return;
  }
  if (run.training) return print_training(args, run.setup, *run.training);
  if (run.extrapolation) {
    std::cout << "steady state: " << run.extrapolation->simulated_iterations
              << " iterations simulated, every further one adds what the last one added "
                 "(the timeline and trace show the simulated ones)\n\n";
  }
  print_run_summary(std::cout, *run.result, run.metrics);
  if (steady) {
    std::cout << "steady state    " << format_seconds(steady->iteration_s)
              << " per further iteration, bubble " << format_number("%.2f", 100 * steady->bubble)
              << "%\n";
  }
  if (is_asynchronous(run.setup.schedule.kind) && !run.from_chakra) {
    print_pipeline_versions(std::cout, *run.result);
  }
  if (!args.trace_path.empty()) {
    std::cout << "\ntrace written to " << args.trace_path
              << " (open it in https://ui.perfetto.dev or chrome://tracing)\n";
  }
  if (!args.report_path.empty()) {
    std::cout << "\nreport written to " << args.report_path << " (open it in a browser)\n";
  }
}

}  // namespace

void add_simulate_command(CLI::App& app) {
  auto args = std::make_shared<SimulateArgs>();
  CLI::App* cmd = app.add_subcommand("simulate", "simulate a scenario on a virtual cluster");
  cmd->add_option("scenario", args->scenario,
                  "scenario .textproto, or builtin:NAME (default: the built-in quickstart)");
  cmd->add_option("--engine", args->engine, "executor: analytic or simgrid")
      ->default_val("analytic");
  cmd->add_option("--trace", args->trace_path, "write a Chrome/Perfetto trace (JSON)");
  cmd->add_option("--timeline", args->timeline_path, "write the timeline (protobuf)");
  cmd->add_option("--report", args->report_path,
                  "write a self-contained HTML report with plots (docs/reports.md)");
  cmd->add_option("--set", args->overrides, "override a field: PATH=VALUE (repeatable)");
  cmd->add_option("--chakra", args->chakra_dir,
                  "run the Chakra execution traces in DIR (PREFIX.RANK.et) instead, on the "
                  "scenario's cluster (default: the one recorded in them, else the quickstart's)");
  cmd->add_flag("--json", args->json, "print one JSON object instead of the table");
  cmd->add_flag("--allow-oom", args->allow_oom, "report devices out of memory instead of failing");
  cmd->add_flag("--steady-state", args->steady_state,
                "the time each further iteration adds once iterations settle (simulated until "
                "they do) and its bubble, 1 - the busiest GPU's compute per iteration / that "
                "time: --json's steady_state_iteration_s then, and steady_state_bubble");
  add_resource_options(cmd, &args->resources);
  cmd->callback([args] { run_simulate(*args); });
}

}  // namespace pipetwin
