// `pipetwin whatif TRACE --meta META.yaml [--json] [--report FILE.html]`
//
// A measured Megatron job's op timeline (docs/whatif.md): how fast without its stragglers, and
// the slowdown by stage, data-parallel rank and op type.
#include <iostream>
#include <memory>

#include "analysis/whatif.h"
#include "app/whatif_run.h"
#include "cli/cli_app.h"
#include "report/html_page.h"
#include "report/text_units.h"
#include "report/whatif_page.h"

namespace pipetwin {
namespace {

void write_whatif_report(const WhatIfResult& r, const std::string& path) {
  HtmlPage page("pipetwin whatif: " + (r.name.empty() ? std::string("trace") : r.name),
                std::to_string(r.steps.size()) + " measured steps");
  WhatIfReport report;
  report.headline = {{"measured step", format_seconds(r.measured_step_s)},
                     {"without launch delays", format_seconds(r.no_delay_step_s)},
                     {"without stragglers", format_seconds(r.ideal_step_s)},
                     {"slowdown", format_number("%.3f", r.slowdown)}};
  report.by_stage = slowdowns_by_name(r.by_stage);
  report.by_dp_rank = slowdowns_by_name(r.by_dp_rank);
  report.by_op = r.by_op;
  add_whatif_sections(page, report);
  write_html_report(path, page);
}

}  // namespace

void add_whatif_command(CLI::App& app) {
  struct Args {
    std::string trace, meta, report;
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
  cmd->add_option("--report", args->report,
                  "write a self-contained HTML report: the slowdown by stage, rank and op type");
  cmd->callback([args] {
    if (!args->report.empty()) check_report_path(args->report);
    const WhatIfResult result = what_if(read_megatron_op_trace(args->trace, args->meta));
    if (!args->report.empty()) write_whatif_report(result, args->report);
    if (args->json) {
      std::cout << whatif_json(result).dump(2) << "\n";
    } else {
      print_whatif(std::cout, result);
    }
  });
}

}  // namespace pipetwin
