// `pipetwin export chakra [SCENARIO] -o DIR [--set PATH=VALUE]...`
//
// Writes the scenario's Program as Chakra execution traces, one file per rank
// (DIR/pipetwin.RANK.et) and DIR/comm_group.json, for ASTRA-sim and Chakra's tools
// (docs/chakra.md).
#include <iostream>
#include <memory>

#include "app/chakra_export_run.h"
#include "cli/cli_app.h"
#include "cli/resource_options.h"

namespace pipetwin {
namespace {

struct ExportArgs {
  std::string scenario;
  std::string out_dir;
  std::vector<std::string> overrides;
  ResourceOptions resources;
};

void run_export_chakra(const ExportArgs& args) {
  const ChakraExportRun run = export_chakra(args.scenario, args.overrides, args.resources.limits());
  write_chakra_workload(run.workload, args.out_dir);
  const size_t ranks = run.workload.ranks.size();
  std::cout << run.scenario_name << ": " << run.instructions << " instructions on " << ranks
            << " ranks written to " << args.out_dir << "/" << kChakraPrefix << ".{0.." << ranks - 1
            << "}.et (ASTRA-sim: --workload-configuration=" << args.out_dir << "/" << kChakraPrefix
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
