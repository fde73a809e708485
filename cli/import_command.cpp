// `pipetwin import megatron [--preset P] [--nodes N] [-o F.textproto] -- ARGS...`
// `pipetwin import torchtitan JOB.toml [--preset P] [--nodes N] [-o F.textproto]`
//
// A scenario from a job's launch configuration (docs/scenario-format.md, "From launch
// configurations"): Megatron-LM's training arguments, torchtitan's job files.
#include <iostream>
#include <memory>

#include "cli/cli_app.h"
#include "sim/scenario/import_megatron.h"
#include "sim/scenario/import_torchtitan.h"
#include "sim/scenario/scenario_writer.h"

namespace pipetwin {
namespace {

void write_imported(const ImportedScenario& imported, const std::string& what,
                    const std::vector<std::string>& args, const std::string& output) {
  std::string header = "# Imported by `pipetwin import " + what + "` from:\n#  ";
  for (const std::string& arg : args) header += " " + arg;
  header += "\n";
  for (const std::string& note : imported.notes) header += "# Note: " + note + "\n";
  const LoadedScenario nowhere;  // no file paths to rebase
  write_scenario(imported.scenario, nowhere, header, output, output.empty() ? "" : "scenario");
}

}  // namespace

void add_import_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("import", "scenarios from a job's launch configuration");
  cmd->require_subcommand(1);

  struct MegatronArgs {
    std::string preset = "dgx-h100";
    int nodes = 1;
    std::string output;
    std::vector<std::string> args;
  };
  auto megatron = std::make_shared<MegatronArgs>();
  CLI::App* m = cmd->add_subcommand("megatron", "a scenario from Megatron-LM's training arguments");
  m->add_option("--preset", megatron->preset, "the cluster preset")->default_val("dgx-h100");
  m->add_option("--nodes", megatron->nodes, "nodes of the preset (data parallelism is the rest)")
      ->default_val(1)
      ->check(CLI::Range(1, 1 << 20));
  m->add_option("-o,--output", megatron->output, "write the scenario here (default: stdout)");
  m->add_option("args", megatron->args, "Megatron's arguments, after --")->required();
  struct TorchtitanArgs {
    std::string job;
    std::string preset = "dgx-h100";
    int nodes = 1;
    std::string output;
  };
  auto titan = std::make_shared<TorchtitanArgs>();
  CLI::App* tt = cmd->add_subcommand("torchtitan", "a scenario from a torchtitan job file (TOML)");
  tt->add_option("job", titan->job, "torchtitan's job file")->required();
  tt->add_option("--preset", titan->preset, "the cluster preset")->default_val("dgx-h100");
  tt->add_option("--nodes", titan->nodes,
                 "nodes of the preset (FSDP's shard degree -1 is the rest)")
      ->default_val(1)
      ->check(CLI::Range(1, 1 << 20));
  tt->add_option("-o,--output", titan->output, "write the scenario here (default: stdout)");
  tt->callback([titan] {
    write_imported(scenario_from_torchtitan(titan->job, titan->preset, titan->nodes), "torchtitan",
                   {titan->job}, titan->output);
  });
  m->callback([megatron] {
    write_imported(scenario_from_megatron_args(megatron->args, megatron->preset, megatron->nodes),
                   "megatron", megatron->args, megatron->output);
  });
}

}  // namespace pipetwin
