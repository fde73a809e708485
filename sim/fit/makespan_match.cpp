#include "sim/fit/makespan_match.h"

#include <google/protobuf/text_format.h>

#include <cmath>

#include "sim/driver/build_program.h"
#include "sim/exec/analytic_executor.h"
#include "sim/exec/interference.h"
#include "sim/scenario/loaded_scenario.h"
#include "sim/scenario/resolve_scenario.h"

namespace pipetwin {

MakespanMatch match_makespan(proto::Scenario& scenario, const std::string& base_dir,
                             double measured_makespan_s) {
  // Resolved and lowered once: only the wake-up gap changes, and with it the
  // interference delays and the times.
  std::string text;
  google::protobuf::TextFormat::PrintToString(scenario, &text);
  ResolvedScenario setup = resolve_scenario(parse_scenario(text, "fitted", base_dir, false, {}));
  Program program = build_program(setup);
  proto::Dispatch* dispatch = scenario.mutable_cluster()->mutable_dispatch();
  auto simulated_with = [&](double wakeup_us) {
    setup.cluster.dispatch.wakeup_s = wakeup_us * 1e-6;
    apply_interference(program, setup.cluster);
    return run_analytic(program, setup.cluster).span_s();
  };
  MakespanMatch match;
  match.wakeup_before_s = dispatch->wakeup_us() * 1e-6;
  match.simulated_before_s = simulated_with(dispatch->wakeup_us());
  // Bracket the wake-up gap: [low, high] with the simulation short at low, long at high.
  double low = dispatch->wakeup_us(), high = low;
  if (match.simulated_before_s < measured_makespan_s) {
    double step = 1;
    for (int k = 0; k < 40 && simulated_with(high) < measured_makespan_s; ++k, step *= 2) {
      low = high;
      high += step;
    }
  } else {  // the mean gaps overstate the waiting: lower the gap, not below 0
    low = 0;
    if (simulated_with(0) >= measured_makespan_s) high = 0;
  }
  for (int k = 0; k < 50 && high - low > 1e-3; ++k) {
    const double mid = 0.5 * (low + high);
    const double simulated = simulated_with(mid);
    (simulated >= measured_makespan_s ? high : low) = mid;
    if (std::abs(simulated / measured_makespan_s - 1) < 1e-4) high = low = mid;
  }
  dispatch->set_wakeup_us(high);
  match.wakeup_after_s = high * 1e-6;
  match.simulated_after_s = simulated_with(high);
  return match;
}

}  // namespace pipetwin
