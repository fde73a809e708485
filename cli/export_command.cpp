// `pipetwin export chakra [SCENARIO] -o DIR [--set PATH=VALUE]...`
//
// Writes the scenario's Program as Chakra execution traces, one file per rank
// (DIR/pipetwin.RANK.et) and DIR/comm_group.json, for ASTRA-sim and Chakra's tools
// (docs/chakra.md).
#include <iostream>
#include <memory>

#include "cli/cli_app.h"
#include "cli/resource_options.h"
#include "sim/build_program.h"
#include "sim/chakra/chakra_export.h"
#include "sim/exec/interference.h"
#include "sim/scenario/resolve_scenario.h"
#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

struct ExportArgs {
  std::string scenario;
  std::string out_dir;
  std::vector<std::string> overrides;
  ResourceOptions resources;
};

void run_export_chakra(const ExportArgs& args) {
  const LoadedScenario loaded = load_scenario(args.scenario, args.overrides);
  const ResolvedScenario setup = resolve_scenario(loaded);
  if (setup.freeze.enabled) {
    throw InputError(loaded.where("freeze") +
                     ": a FreezePipe training run changes its program at every freeze, and the "
                     "traces hold one program: export the scenario without its freeze block");
  }
  check_resource_limits(setup, args.resources.limits());
  Program program = build_program(setup);
  apply_interference(program, setup.cluster);
  const ChakraWorkload workload =
      chakra_workload(program, {setup.name, args.scenario, args.overrides});
  write_chakra_workload(workload, args.out_dir);
  std::cout << setup.name << ": " << program.size() << " instructions on " << workload.ranks.size()
            << " ranks written to " << args.out_dir << "/" << kChakraPrefix << ".{0.."
            << workload.ranks.size() - 1 << "}.et"
            << " (ASTRA-sim: --workload-configuration=" << args.out_dir << "/" << kChakraPrefix
            << " --comm-group-configuration=" << args.out_dir << "/comm_group.json)\n";
}

}  // namespace

void add_export_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("export", "write a scenario's program in another format");
  cmd->require_subcommand(1);
  auto args = std::make_shared<ExportArgs>();
  CLI::App* chakra = cmd->add_subcommand(
      "chakra", "Chakra execution traces, one file per rank (for ASTRA-sim; docs/chakra.md)");
  chakra->add_option("scenario", args->scenario,
                     "scenario .textproto, or builtin:NAME (default: the built-in quickstart)");
  chakra->add_option("-o,--output", args->out_dir, "directory of the traces (created if missing)")
      ->required();
  chakra->add_option("--set", args->overrides, "override a field: PATH=VALUE (repeatable)");
  add_resource_options(chakra, &args->resources);
  chakra->callback([args] { run_export_chakra(*args); });
}

}  // namespace pipetwin
