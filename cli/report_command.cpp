// `pipetwin report TIMELINE... -o FILE.html`: saved timelines (from --timeline of simulate or
// run) as one self-contained HTML report, one run after the other (docs/reports.md).
#include <memory>
#include <stdexcept>

#include "app/measured_timeline.h"
#include "app/run_files.h"
#include "app/run_summary.h"
#include "cli/cli_app.h"
#include "report/html_page.h"
#include "sim/spec/errors.h"
#include "traces/timeline_proto_io.h"

namespace pipetwin {

void add_report_command(CLI::App& app) {
  struct Args {
    std::vector<std::string> timeline_paths;
    std::string output_path;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd =
      app.add_subcommand("report", "write saved timelines as a self-contained HTML report");
  cmd->add_option("timelines", args->timeline_paths, "timeline files from --timeline")->required();
  cmd->add_option("-o,--output", args->output_path, "report file to write (HTML)")->required();
  cmd->callback([args] {
    check_report_path(args->output_path);
    std::vector<Timeline> timelines;
    for (const std::string& path : args->timeline_paths) {
      timelines.push_back(read_any_timeline(path));
    }
    write_timeline_report(args->output_path, args->timeline_paths, timelines);
  });
}

}  // namespace pipetwin
