// `pipetwin whatif TRACE --meta META.yaml [--json]`
//
// A measured Megatron job's op timeline (docs/whatif.md): how fast without its stragglers, and
// the slowdown by stage, data-parallel rank and op type.
#include <iostream>
#include <memory>

#include "analysis/whatif.h"
#include "app/whatif_run.h"
#include "cli/cli_app.h"

namespace pipetwin {

void add_whatif_command(CLI::App& app) {
  struct Args {
    std::string trace, meta;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "whatif", "a measured job without its stragglers: slowdown by stage, rank and op type");
  cmd->add_option("trace", args->trace,
                  "Megatron-style op timeline (Chrome trace events, may be gzipped)")
      ->required();
  cmd->add_option("--meta", args->meta, "the job's parallel sizes (YAML: dp_size, pp_size, ...)")
      ->required();
  cmd->add_flag("--json", args->json, "print a JSON object instead of the table");
  cmd->callback([args] {
    const WhatIfResult result = what_if(read_megatron_op_trace(args->trace, args->meta));
    if (args->json) {
      std::cout << whatif_json(result).dump(2) << "\n";
    } else {
      print_whatif(std::cout, result);
    }
  });
}

}  // namespace pipetwin
