// `pipetwin straggler [SCENARIO] --factor F[,F...] [--devices LIST] [--links]
//                     [--engine analytic|simgrid] [--set PATH=VALUE]... [-j N] [--json]`
//
// One slow device at each position and speed: the sweep of cluster.overrides a straggler
// what-if is, with the slowdown attributed to stages, ranks and op kinds (docs/goodput.md).
#include <iostream>
#include <memory>

#include "app/straggler_run.h"
#include "cli/cli_app.h"
#include "cli/resource_options.h"

namespace pipetwin {

void add_straggler_command(CLI::App& app) {
  struct Args {
    StragglerRequest request;
    ResourceOptions resources;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  StragglerRequest& r = args->request;
  CLI::App* cmd = app.add_subcommand(
      "straggler", "what-if: one slow device at every position, the slowdown attributed");
  cmd->add_option("scenario", r.scenario,
                  "scenario .textproto, or builtin:NAME (default: the built-in quickstart)");
  cmd->add_option("--factor", r.factors, "the slow device's speed, in (0, 1] (comma-separated)")
      ->delimiter(',')
      ->required();
  cmd->add_option("--devices", r.devices,
                  "device ids to slow, one at a time (\"0-7,64\"; default: every GPU of "
                  "data-parallel replica 0)");
  cmd->add_flag("--links", r.links, "slow the device's links (link_scale) instead of its compute");
  cmd->add_option("--engine", r.engine, "executor of every point")->default_val("analytic");
  cmd->add_option("--set", r.overrides, "override a field: PATH=VALUE (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("-j,--jobs", r.jobs, "points run at once (default: the number of CPUs)")
      ->check(CLI::Range(1, 4096));
  add_resource_options(cmd, &args->resources);
  cmd->add_flag("--json", args->json, "print a JSON object instead of the table");
  cmd->callback([args] {
    args->request.limits = args->resources.limits();
    const StragglerRun run = run_straggler(args->request);
    if (args->json) {
      std::cout << run.json().dump(2) << "\n";
    } else {
      print_straggler(std::cout, run);
    }
  });
}

}  // namespace pipetwin
