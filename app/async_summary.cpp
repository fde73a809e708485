#include "app/async_summary.h"

#include <algorithm>
#include <map>

#include "report/text_units.h"
#include "sim/schedule/weight_versions.h"

namespace pipetwin {
namespace {

// Between the ends of the first and the last iteration's updates, per iteration: the
// rate once the pipeline is full. One iteration: the makespan. From the timeline, so
// that a measured run without its warm-up iterations counts only those it kept; from the
// Program and its times where the simulation built no timeline.
double steady_state_iteration_s(const SimulationResult& result) {
  std::map<int32_t, double> update_end;
  double makespan = 0;
  const auto add = [&](Op op, int32_t iteration, double end_s) {
    makespan = std::max(makespan, end_s);
    if (op != Op::kOptim) return;
    double& end = update_end[iteration];
    end = std::max(end, end_s);
  };
  if (result.timeline.spans.empty()) {
    for (int32_t i = 0; i < result.program.size(); ++i) {
      const Instruction& instr = result.program.instructions[i];
      add(instr.op, instr.iteration, result.times.end_s[i]);
    }
  } else {
    for (const Span& s : result.timeline.spans) {
      add(s.op == op_name(Op::kOptim) ? Op::kOptim : Op::kFwd, s.iteration, s.end_s);
    }
  }
  if (update_end.size() < 2) return makespan;
  return (update_end.rbegin()->second - update_end.begin()->second) /
         static_cast<double>(update_end.rbegin()->first - update_end.begin()->first);
}

}  // namespace

nlohmann::json pipeline_versions_json(const SimulationResult& result) {
  const WeightVersions versions = weight_versions(result.program);
  const double steady = steady_state_iteration_s(result);
  return {
      {"weight_staleness", {{"max", versions.max_staleness}, {"mean", versions.mean_staleness}}},
      {"weight_versions", versions.alive},
      {"steady_state_iteration_s", steady},
      {"steady_state_throughput_samples_per_s",
       steady > 0 ? result.setup.training.global_batch / steady : 0}};
}

void print_pipeline_versions(std::ostream& out, const SimulationResult& result) {
  const WeightVersions versions = weight_versions(result.program);
  const double steady = steady_state_iteration_s(result);
  std::string alive;
  for (int32_t v : versions.alive) {
    if (!alive.empty()) alive += ',';
    alive += std::to_string(v);
  }
  out << "weight versions  " << alive << " per stage; staleness max " << versions.max_staleness
      << ", mean " << format_number("%.2f", versions.mean_staleness) << "\n"
      << "steady state     " << format_seconds(steady) << " per iteration, "
      << format_number("%.1f", result.setup.training.global_batch / steady) << " samples/s\n";
}

}  // namespace pipetwin
