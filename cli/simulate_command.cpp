// `pipetwin simulate [SCENARIO] [--engine analytic] [--trace FILE.json] [--timeline FILE]
//                    [--report FILE.html]
//                    [--set PATH=VALUE]... [--json] [--allow-oom]
//                    [--max-instructions N] [--max-memory GiB]`
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "analysis/metrics.h"
#include "cli/async_report.h"
#include "cli/cli_app.h"
#include "cli/freeze_report.h"
#include "cli/report.h"
#include "cli/resource_options.h"
#include "report/freeze_page.h"
#include "report/html_page.h"
#include "report/text_units.h"
#include "sim/freeze/training_run.h"
#include "sim/scenario/resolve_scenario.h"
#include "sim/simulate.h"
#include "sim/spec/errors.h"
#include "sim/steady_state.h"

namespace pipetwin {
namespace {

struct SimulateArgs {
  std::string scenario;
  std::string engine = "analytic";
  std::string trace_path;
  std::string timeline_path;
  std::string report_path;
  std::vector<std::string> overrides;
  bool json = false;
  bool allow_oom = false;
  ResourceOptions resources;
};

SimulationOptions simulation_options(const SimulateArgs& args) {
  return {parse_engine(args.engine), args.allow_oom, args.resources.limits()};
}

// A run too large to simulate whole, in its steady state: the timeline of the longer probe,
// the metrics and link totals extrapolated to every iteration.
struct Extrapolated {
  SimulationResult result;  // the longer probe, its setup saying the full iteration count
  RunMetrics metrics;
  int32_t simulated_iterations = 0;
  int64_t instructions = 0;  // of the full run: each iteration adds the same count
};

Extrapolated extrapolate(const ResolvedScenario& setup, SteadyStateRuns runs) {
  const int64_t iterations = setup.training.iterations;
  const int64_t batch = setup.training.global_batch;
  const int32_t n = runs.shorter.setup.training.iterations;
  Extrapolated e;
  e.simulated_iterations = n + 1;
  e.metrics = extrapolate_metrics(compute_metrics(runs.shorter.timeline, n, batch),
                                  compute_metrics(runs.longer.timeline, n + 1, batch), n + 1,
                                  iterations, batch);
  const int64_t per_iteration = runs.longer.program.size() - runs.shorter.program.size();
  e.instructions = runs.longer.program.size() + (iterations - n - 1) * per_iteration;
  e.result = std::move(runs.longer);
  const double extra = static_cast<double>(iterations - n - 1);
  for (size_t l = 0; l < e.result.links.size() && l < runs.shorter.links.size(); ++l) {
    LinkUsage& link = e.result.links[l];
    const LinkUsage& before = runs.shorter.links[l];
    link.bytes += extra * (link.bytes - before.bytes);
    link.busy_s += extra * (link.busy_s - before.busy_s);
  }
  e.result.setup.training.iterations = setup.training.iterations;
  return e;
}

// The run, or its steady-state extrapolation when the whole run is past the limits.
std::optional<Extrapolated> try_extrapolation(const SimulateArgs& args,
                                              const ResolvedScenario& setup) {
  const SimulationOptions options = simulation_options(args);
  if (within_limits(estimate_program_size(setup), options.limits)) return std::nullopt;
  if (!can_extrapolate(setup, options)) return std::nullopt;  // the limit's error follows
  std::optional<SteadyStateRuns> runs = find_steady_state(setup, options);
  if (!runs) return std::nullopt;
  return extrapolate(setup, std::move(*runs));
}

// A whole training run with FreezePipe: a phase table, or JSON with training_time_s,
// freeze_events and phases next to the first phase's report.
void run_training(const SimulateArgs& args, const ResolvedScenario& setup) {
  const TrainingRun run = simulate_training(setup, simulation_options(args));
  write_run_files(run.overview, args.trace_path, args.timeline_path);
  const int32_t iterations = setup.training.iterations;
  if (!args.report_path.empty()) {
    HtmlPage page(setup.name + ": pipetwin report", setup.name + ": FreezePipe over " +
                                                        std::to_string(iterations) +
                                                        " iterations, engine " + args.engine);
    add_freeze_sections(page, run,
                        {{"training time", format_seconds(run.training_time_s)},
                         {"phases", std::to_string(run.phases.size())},
                         {"migrations", std::to_string(run.migrations.size())}});
    write_html_report(args.report_path, page);
  }
  if (args.json) {
    const SimulationResult& first = run.first_phase;
    nlohmann::json j =
        report_json(first, compute_metrics(first.timeline, 1, setup.training.global_batch));
    j["training_time_s"] = run.training_time_s;
    j["iteration_time_s"] = run.training_time_s / iterations;
    j["throughput_samples_per_s"] =
        static_cast<double>(setup.training.global_batch) * iterations / run.training_time_s;
    j.update(freeze_run_json(run.phases, run.migrations));
    if (setup.freeze.cache_epoch_iterations > 0) j["autocache"] = autocache_json(setup, run);
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::cout << setup.name << ": FreezePipe over " << iterations << " iterations, engine "
            << args.engine << "\n\n";
  print_freeze_phases(std::cout, run.phases, run.migrations);
  std::cout << "\n";
  if (setup.freeze.cache_epoch_iterations > 0) print_autocache(std::cout, setup, run);
  std::cout << "training time  " << format_seconds(run.training_time_s) << "\n";
  if (!args.report_path.empty()) {
    std::cout << "\nreport written to " << args.report_path << " (open it in a browser)\n";
  }
}

void run_simulate(const SimulateArgs& args) {
  if (!args.report_path.empty()) check_report_path(args.report_path);
  const LoadedScenario loaded = load_scenario(args.scenario, args.overrides);
  const ResolvedScenario setup = resolve_scenario(loaded);
  if (setup.freeze.enabled && setup.freeze.measured()) {
    throw InputError(loaded.where("freeze") +
                     ": no source of freezing to simulate: give at, log or synthetic (without "
                     "one, the rule runs on the gradients pipetwin run measures)");
  }
  if (setup.freeze.enabled) return run_training(args, setup);
  std::optional<Extrapolated> extrapolated = try_extrapolation(args, setup);
  const SimulationResult result = extrapolated ? std::move(extrapolated->result)
                                               : simulate_setup(setup, simulation_options(args));
  const RunMetrics metrics =
      extrapolated ? extrapolated->metrics
                   : compute_metrics(result.timeline, result.setup.training.iterations,
                                     result.setup.training.global_batch);
  write_run_files(result.timeline, args.trace_path, args.timeline_path);
  if (!args.report_path.empty()) {
    std::vector<std::string> notes;
    if (extrapolated) {
      notes.push_back("Steady state: " + std::to_string(extrapolated->simulated_iterations) +
                      " iterations simulated, every further one adds what the last one added "
                      "(the charts show the simulated ones).");
    }
    write_run_report(args.report_path, result, metrics, notes);
  }
  if (args.json) {
    nlohmann::json j = report_json(result, metrics);
    j.update(pipeline_versions_json(result));
    if (extrapolated) {
      j["instructions"] = extrapolated->instructions;
      j["steady_state"] = {{"simulated_iterations", extrapolated->simulated_iterations},
                           {"extrapolated", true}};
    }
    std::cout << j.dump(2) << "\n";
  } else {
    if (extrapolated) {
      std::cout << "steady state: " << extrapolated->simulated_iterations
                << " iterations simulated, every further one adds what the last one added "
                   "(the timeline and trace show the simulated ones)\n\n";
    }
    print_report(std::cout, result, metrics);
    if (is_asynchronous(setup.schedule.kind)) print_pipeline_versions(std::cout, result);
    if (!args.trace_path.empty()) {
      std::cout << "\ntrace written to " << args.trace_path
                << " (open it in https://ui.perfetto.dev or chrome://tracing)\n";
    }
    if (!args.report_path.empty()) {
      std::cout << "\nreport written to " << args.report_path << " (open it in a browser)\n";
    }
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
  cmd->add_flag("--json", args->json, "print one JSON object instead of the table");
  cmd->add_flag("--allow-oom", args->allow_oom, "report devices out of memory instead of failing");
  add_resource_options(cmd, &args->resources);
  cmd->callback([args] { run_simulate(*args); });
}

}  // namespace pipetwin
