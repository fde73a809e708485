// `pipetwin trace TIMELINE -o FILE.json`: a saved timeline to a Chrome/Perfetto trace.
#include <memory>
#include <stdexcept>

#include "app/measured_timeline.h"
#include "cli/cli_app.h"
#include "sim/spec/errors.h"
#include "traces/atomic_file.h"
#include "traces/chrome_trace.h"
#include "traces/timeline_proto_io.h"

namespace pipetwin {

void add_trace_command(CLI::App& app) {
  struct Args {
    std::string timeline_path;
    std::string output_path;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("trace", "convert a timeline to a Chrome/Perfetto trace");
  cmd->add_option("timeline", args->timeline_path, "timeline file from --timeline")->required();
  cmd->add_option("-o,--output", args->output_path, "trace file to write (JSON)")->required();
  cmd->callback([args] {
    const Timeline timeline = read_any_timeline(args->timeline_path);
    write_file_atomically(args->output_path,
                          [&](std::ostream& out) { write_chrome_trace(timeline, out); });
  });
}

}  // namespace pipetwin
