#include "sim/scenario/scenario_writer.h"

#include <google/protobuf/text_format.h>

#include <filesystem>
#include <iostream>

#include "sim/spec/errors.h"
#include "traces/atomic_file.h"

namespace pipetwin {
namespace {

namespace fs = std::filesystem;

// `path`, relative to `source`'s folder, as seen from the folder of `output`.
std::string rebased(const std::string& path, const LoadedScenario& source,
                    const std::string& output) {
  if (path.empty() || fs::path(path).is_absolute()) return path;
  if (source.builtin) {
    std::cerr << "warning: the written scenario refers to '" << path << "', which the built-in "
              << "scenario finds among its embedded files; copy it next to the written file\n";
    return path;
  }
  const fs::path target = fs::absolute(fs::path(source.base_dir) / path).lexically_normal();
  if (output.empty()) return target.string();
  const fs::path folder = fs::absolute(fs::path(output)).parent_path().lexically_normal();
  const fs::path relative = target.lexically_relative(folder);
  return relative.empty() ? target.string() : relative.generic_string();
}

}  // namespace

proto::Scenario rebase_file_paths(proto::Scenario scenario, const LoadedScenario& source,
                                  const std::string& output) {
  if (scenario.model().has_pipedream_profile()) {
    scenario.mutable_model()->set_pipedream_profile(
        rebased(scenario.model().pipedream_profile(), source, output));
  }
  if (scenario.model().has_hf_config()) {
    scenario.mutable_model()->set_hf_config(rebased(scenario.model().hf_config(), source, output));
  }
  if (scenario.cluster().has_simgrid_platform()) {
    scenario.mutable_cluster()->set_simgrid_platform(
        rebased(scenario.cluster().simgrid_platform(), source, output));
  }
  if (scenario.freeze().has_log()) {
    scenario.mutable_freeze()->set_log(rebased(scenario.freeze().log(), source, output));
  }
  return scenario;
}

void write_scenario(const proto::Scenario& scenario, const LoadedScenario& source,
                    const std::string& header, const std::string& output, const std::string& what) {
  google::protobuf::TextFormat::Printer printer;
  printer.SetUseShortRepeatedPrimitives(true);
  std::string text;
  if (!printer.PrintToString(rebase_file_paths(scenario, source, output), &text)) {
    throw RuntimeFailure("cannot print the scenario to " + (output.empty() ? "stdout" : output));
  }
  text = header + text;
  if (output.empty()) {
    std::cout << text;
    return;
  }
  write_file_atomically(output, [&](std::ostream& out) { out << text; });
  if (!what.empty()) std::cerr << what << " written to " << output << "\n";
}

}  // namespace pipetwin
