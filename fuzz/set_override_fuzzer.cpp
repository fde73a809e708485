// `--set PATH=VALUE` and `--vary PATH=V1,V2,...` on a shipped scenario. The input is lines:
// an optional first line "builtin:NAME" picks the scenario (quickstart otherwise); every other
// line is a --set assignment, or a --vary when it starts with "vary ". The assignments go
// through parse_scenario as the CLI passes them (apply_override with field paths, then the
// cluster preset), and the result through resolve_scenario and the analytic simulation.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "scenarios/builtin_files.h"
#include "sim/scenario/apply_override.h"
#include "sim/scenario/field_path.h"
#include "sim/sweep/vary_axis.h"

using namespace pipetwin;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  std::string line, name = "quickstart.textproto";
  std::vector<std::string> overrides;
  bool first = true;
  while (std::getline(in, line) && overrides.size() < 16) {
    if (first && line.rfind("builtin:", 0) == 0) {
      name = line.substr(8);
    } else if (line.rfind("vary ", 0) == 0) {
      // A sweep point: each value of the axis becomes one --set, as `pipetwin sweep` does.
      fuzz::expect_only_reported_errors([&] {
        const VaryAxis axis = parse_vary(line.substr(5));
        for (const std::string& value : axis.values) overrides.push_back(axis.path + "=" + value);
      });
    } else {
      overrides.push_back(line);
    }
    first = false;
  }
  const std::optional<std::string> text = builtin_file(name);
  if (!text) return 0;
  // Field paths alone, as error messages resolve them (std::invalid_argument is their contract).
  for (const std::string& assignment : overrides) {
    try {
      (void)resolve_field_path(proto::Scenario::descriptor(),
                               assignment.substr(0, assignment.find('=')));
    } catch (const std::invalid_argument&) {
    }
  }
  fuzz::expect_only_reported_errors([&] {
    const LoadedScenario loaded = parse_scenario(*text, "builtin:" + name, "", true, overrides);
    for (const auto& [path, assignment] : loaded.overrides) (void)loaded.where(path);
    if (!fuzz::reads_only_embedded_files(loaded.scenario, "")) return;
    fuzz::simulate_within_limits(resolve_scenario(loaded));
  });
  return 0;
}
