#include "sim/cli/calibrate_from_trace.h"

#include <google/protobuf/text_format.h>

#include <cstdio>
#include <iostream>

#include "sim/errors.h"
#include "sim/fit/trace_fit.h"
#include "sim/scenario/loaded_scenario.h"
#include "sim/scenario/resolve_scenario.h"
#include "sim/simulate.h"
#include "traces/atomic_file.h"
#include "traces/timeline_proto_io.h"

namespace pipetwin {

void calibrate_from_trace(const std::string& scenario, const std::vector<std::string>& overrides,
                          const std::string& timeline_path, const std::string& output) {
  const LoadedScenario loaded = load_scenario(scenario, overrides);
  const ResolvedScenario setup = resolve_scenario(loaded);
  Timeline measured;
  try {
    measured = read_timeline_file(timeline_path);
  } catch (const std::runtime_error& e) {
    throw InputError(e.what());
  }
  const TraceFit fit = fit_trace(setup, measured, timeline_path);
  std::string text;
  google::protobuf::TextFormat::PrintToString(fitted_scenario(loaded.scenario, setup, fit), &text);
  text = describe_fit(fit, timeline_path) + text;

  // The fitted scenario on the run it was fitted on: how much the fit left unexplained.
  const LoadedScenario again =
      parse_scenario(text, output.empty() ? "fitted" : output, loaded.base_dir, loaded.builtin, {});
  const double predicted = simulate(again, {}).times.span_s();
  std::fprintf(stderr, "%s", describe_fit(fit, timeline_path).c_str());
  std::fprintf(stderr,
               "fitted scenario simulates %.3f ms; the measured run took %.3f ms (%+.2f%%)\n",
               predicted * 1e3, fit.measured_makespan_s * 1e3,
               100 * (fit.measured_makespan_s / predicted - 1));
  if (output.empty()) {
    std::cout << text;
  } else {
    write_file_atomically(output, [&](std::ostream& out) { out << text; });
    std::cerr << "fitted scenario written to " << output << "\n";
  }
}

}  // namespace pipetwin
