// `pipetwin simulate [SCENARIO] [--engine analytic] [--trace FILE.json] [--timeline FILE]
//                    [--set PATH=VALUE]... [--json] [--allow-oom]`
#include <iostream>
#include <memory>

#include "analysis/metrics.h"
#include "sim/cli/cli_app.h"
#include "sim/cli/report.h"
#include "sim/simulate.h"

namespace pipetwin {
namespace {

struct SimulateArgs {
  std::string scenario;
  std::string engine = "analytic";
  std::string trace_path;
  std::string timeline_path;
  std::vector<std::string> overrides;
  bool json = false;
  bool allow_oom = false;
};

void run_simulate(const SimulateArgs& args) {
  const LoadedScenario loaded = load_scenario(args.scenario, args.overrides);
  const SimulationResult result = simulate(loaded, {args.engine, args.allow_oom});
  const RunMetrics metrics = compute_metrics(result.timeline, result.setup.training.iterations,
                                             result.setup.training.global_batch);
  write_run_files(result.timeline, args.trace_path, args.timeline_path);
  if (args.json) {
    std::cout << report_json(result, metrics).dump(2) << "\n";
  } else {
    print_report(std::cout, result, metrics);
    if (!args.trace_path.empty()) {
      std::cout << "\ntrace written to " << args.trace_path
                << " (open it in https://ui.perfetto.dev or chrome://tracing)\n";
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
  cmd->add_option("--set", args->overrides, "override a field: PATH=VALUE (repeatable)");
  cmd->add_flag("--json", args->json, "print one JSON object instead of the table");
  cmd->add_flag("--allow-oom", args->allow_oom, "report devices out of memory instead of failing");
  cmd->callback([args] { run_simulate(*args); });
}

}  // namespace pipetwin
