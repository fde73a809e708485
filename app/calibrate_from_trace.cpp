#include "app/calibrate_from_trace.h"

#include <cstdio>
#include <utility>

#include "app/measured_timeline.h"
#include "sim/fit/makespan_match.h"
#include "sim/fit/trace_fit.h"
#include "sim/scenario/loaded_scenario.h"
#include "sim/scenario/resolve_scenario.h"
#include "sim/scenario/scenario_writer.h"
#include "sim/spec/errors.h"
#include "traces/timeline_proto_io.h"

namespace pipetwin {

FittedScenario fit_scenario_to_runs(const std::string& scenario,
                                    const std::vector<std::string>& overrides,
                                    const std::vector<std::string>& timeline_paths,
                                    const std::vector<std::string>& resized_paths) {
  const LoadedScenario loaded = load_scenario(scenario, overrides);
  const ResolvedScenario setup = resolve_scenario(loaded);
  std::vector<std::string> paths = timeline_paths;
  paths.insert(paths.end(), resized_paths.begin(), resized_paths.end());
  std::vector<Timeline> measured(paths.size());
  std::vector<NamedTimeline> runs, resized;
  for (size_t k = 0; k < paths.size(); ++k) {
    measured[k] = read_any_timeline(paths[k]);
    (k < timeline_paths.size() ? runs : resized).push_back({&measured[k], paths[k]});
  }
  const TraceFit fit = fit_trace(setup, runs, resized);
  proto::Scenario fitted = fitted_scenario(loaded.scenario, setup, fit);
  const MakespanMatch match = match_makespan(fitted, loaded.base_dir, fit.measured_makespan_s);
  char line[512];
  std::snprintf(line, sizeof line,
                "#   makespan: the fitted costs and mean gaps simulate %.3f ms (measured "
                "%+.2f%%); with the wake-up gap set from %.1f to %.1f us (the waiting that "
                "variable ops add at each synchronisation), the scenario simulates %.3f ms\n",
                match.simulated_before_s * 1e3,
                100 * (fit.measured_makespan_s / match.simulated_before_s - 1),
                match.wakeup_before_s * 1e6, match.wakeup_after_s * 1e6,
                match.simulated_after_s * 1e3);
  std::string header = describe_fit(fit, timeline_paths);
  for (const std::string& path : resized_paths) {
    header +=
        "#   with the passes and transfers of " + path + ", a run at another microbatch size\n";
  }
  return {std::move(fitted), header + line};
}

void calibrate_from_trace(const std::string& scenario, const std::vector<std::string>& overrides,
                          const std::vector<std::string>& timeline_paths,
                          const std::string& output) {
  const FittedScenario fitted = fit_scenario_to_runs(scenario, overrides, timeline_paths);
  std::fprintf(stderr, "%s", fitted.header.c_str());
  write_scenario(fitted.scenario, load_scenario(scenario, overrides), fitted.header, output,
                 "fitted scenario");
}

}  // namespace pipetwin
