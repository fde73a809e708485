#include "sim/fit/makespan_match.h"

#include <google/protobuf/text_format.h>

#include "sim/scenario/loaded_scenario.h"
#include "sim/simulate.h"

namespace pipetwin {
namespace {

double simulated_makespan(const proto::Scenario& scenario, const std::string& base_dir) {
  std::string text;
  google::protobuf::TextFormat::PrintToString(scenario, &text);
  return simulate(parse_scenario(text, "fitted", base_dir, false, {}), {}).times.span_s();
}

}  // namespace

MakespanMatch match_makespan(proto::Scenario& scenario, const std::string& base_dir,
                             double measured_makespan_s) {
  proto::Dispatch* dispatch = scenario.mutable_cluster()->mutable_dispatch();
  MakespanMatch match;
  match.wakeup_before_s = match.wakeup_after_s = dispatch->wakeup_us() * 1e-6;
  match.simulated_before_s = match.simulated_after_s = simulated_makespan(scenario, base_dir);
  if (!(match.simulated_before_s < measured_makespan_s)) return match;
  // Bracket: double the added gap until the simulation is at least as long as measured.
  const double base_us = dispatch->wakeup_us();
  double low = 0, high = 1;  // microseconds added
  for (int k = 0; k < 40; ++k) {
    dispatch->set_wakeup_us(base_us + high);
    if (simulated_makespan(scenario, base_dir) >= measured_makespan_s) break;
    low = high;
    high *= 2;
  }
  for (int k = 0; k < 40 && high - low > 1e-3; ++k) {
    const double mid = 0.5 * (low + high);
    dispatch->set_wakeup_us(base_us + mid);
    const double simulated = simulated_makespan(scenario, base_dir);
    if (simulated >= measured_makespan_s) {
      high = mid;
    } else {
      low = mid;
    }
    if (std::abs(simulated / measured_makespan_s - 1) < 1e-3) break;
  }
  dispatch->set_wakeup_us(base_us + high);
  match.wakeup_after_s = (base_us + high) * 1e-6;
  match.simulated_after_s = simulated_makespan(scenario, base_dir);
  return match;
}

}  // namespace pipetwin
