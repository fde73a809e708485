// `pipetwin import TRACE... -o F.timeline [--meta META.yaml] [--map MAP] [--passes]
//                  [--scenario S]`
// `pipetwin import megatron [--preset P] [--nodes N] [-o F.textproto] -- ARGS...`
// `pipetwin import torchtitan JOB.toml [--preset P] [--nodes N] [-o F.textproto]`
//
// A measured job's traces as a pipetwin timeline (docs/compare.md, "Traces of other jobs"):
// PyTorch profiler (Kineto) JSON, one file per rank, or a Megatron-style op timeline with its
// parallel sizes (--meta). And a scenario from a job's launch configuration
// (docs/scenario-format.md, "From launch configurations"): Megatron-LM's training arguments,
// torchtitan's job files. With --scenario, the spans that count microbatches but not samples
// take the scenario's sample ranges (sim/fit/measured_ranges.h), so that `compare` pairs them
// with a simulation of it.
#include <iostream>
#include <memory>

#include "analysis/kineto_trace.h"
#include "analysis/op_trace.h"
#include "analysis/op_trace_timeline.h"
#include "analysis/pass_spans.h"
#include "cli/cli_app.h"
#include "sim/fit/measured_ranges.h"
#include "sim/scenario/import_megatron.h"
#include "sim/scenario/import_torchtitan.h"
#include "sim/scenario/loaded_scenario.h"
#include "sim/scenario/resolve_scenario.h"
#include "sim/scenario/scenario_writer.h"
#include "sim/spec/errors.h"
#include "traces/timeline_proto_io.h"

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
  CLI::App* cmd = app.add_subcommand(
      "import", "a measured job's traces as a timeline; scenarios from launch configurations");
  struct TraceArgs {
    std::vector<std::string> traces;
    std::string meta, map, output, scenario;
    std::vector<std::string> overrides;
    bool passes = false;
  };
  auto traces = std::make_shared<TraceArgs>();
  cmd->add_option("traces", traces->traces,
                  "PyTorch profiler (Kineto) JSON files, one per rank, or a Megatron-style op "
                  "timeline (with --meta); gzipped or not");
  cmd->add_option("--meta", traces->meta,
                  "the op timeline's parallel sizes (YAML: dp_size, pp_size, ...)");
  cmd->add_option("--map", traces->map,
                  "annotation rules for Kineto traces, one \"REGEX = OP\" per line");
  cmd->add_option("-o,--output", traces->output, "the timeline to write (.timeline)");
  cmd->add_option("--scenario", traces->scenario,
                  "the job's scenario: passes and transfers get its microbatches' sample ranges, "
                  "so that `compare` pairs them with its simulation");
  cmd->add_option("--set", traces->overrides, "override a field of --scenario: PATH=VALUE");
  cmd->add_flag("--passes", traces->passes,
                "Kineto traces: one span per annotated pass of a microbatch instead of one per "
                "kernel (what calibrate --from fits and compare pairs with a simulation)");
  cmd->callback([cmd, traces] {
    if (!cmd->get_subcommands().empty()) return;  // megatron or torchtitan did the work
    if (traces->traces.empty()) {
      throw InputError("import: give trace files, or `import megatron` / `import torchtitan`");
    }
    if (traces->output.empty()) throw InputError("import: -o FILE.timeline is required");
    Timeline timeline;
    if (!traces->meta.empty()) {
      if (traces->traces.size() != 1) {
        throw InputError("--meta: one Megatron-style op timeline holds every rank; give one file");
      }
      timeline = timeline_from_op_trace(read_megatron_op_trace(traces->traces[0], traces->meta));
    } else {
      timeline = timeline_from_kineto(traces->traces, traces->map.empty()
                                                          ? default_annotation_rules()
                                                          : read_annotation_rules(traces->map));
      if (traces->passes) timeline = passes_of(timeline);
    }
    int32_t ranged = 0;
    if (!traces->scenario.empty()) {
      ranged = assign_sample_ranges(
          resolve_scenario(load_scenario(traces->scenario, traces->overrides)), timeline);
    }
    write_timeline_file(timeline, traces->output);
    size_t unmatched = 0;
    double unmatched_s = 0, total_s = 0;
    for (const Span& span : timeline.spans) {
      total_s += span.duration_s();
      if (span.op.empty()) ++unmatched, unmatched_s += span.duration_s();
    }
    std::cout << timeline.spans.size() << " spans on " << timeline.devices.size()
              << " devices written to " << traces->output << "; " << unmatched << " unmatched ("
              << (total_s > 0 ? 100 * unmatched_s / total_s : 0) << "% of the time)";
    if (!traces->scenario.empty()) {
      std::cout << "; " << ranged << " given " << traces->scenario << "'s sample ranges";
    }
    std::cout << "\n";
  });

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
