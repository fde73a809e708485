#include "app/whatif_run.h"

#include <algorithm>
#include <vector>

#include "report/text_units.h"

namespace pipetwin {
namespace {

// The groups by slowdown, largest first.
void print_ranked(std::ostream& out, const std::string& title,
                  const std::map<std::string, double>& groups) {
  std::vector<std::pair<std::string, double>> ranked(groups.begin(), groups.end());
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  out << title << ":";
  for (const auto& [name, value] : ranked)
    out << " " << name << " " << format_number("%.3f", value);
  out << "\n";
}

}  // namespace

nlohmann::json whatif_json(const WhatIfResult& r) {
  return {{"trace", r.name},
          {"steps", r.steps},
          {"step_s", r.measured_step_s},
          {"replayed_step_s", r.replayed_step_s},
          {"no_delay_step_s", r.no_delay_step_s},
          {"ideal_step_s", r.ideal_step_s},
          {"slowdown", r.slowdown},
          {"launch_slowdown", r.launch_slowdown},
          {"step_slowdown", slowdowns_by_name(r.step_slowdown)},
          {"by_stage", slowdowns_by_name(r.by_stage)},
          {"by_dp_rank", slowdowns_by_name(r.by_dp_rank)},
          {"by_op", r.by_op}};
}

void print_whatif(std::ostream& out, const WhatIfResult& r) {
  out << "what-if of " << (r.name.empty() ? "the trace" : r.name) << ": " << r.steps.size()
      << " steps\n\n";
  out << pad("measured step", 22) << format_seconds(r.measured_step_s) << "\n";
  out << pad("replayed", 22) << format_seconds(r.replayed_step_s) << " ("
      << format_signed_percent(r.replayed_step_s / r.measured_step_s - 1)
      << ": the dependency model's error)\n";
  out << pad("without launch delays", 22) << format_seconds(r.no_delay_step_s) << "\n";
  out << pad("without stragglers", 22) << format_seconds(r.ideal_step_s)
      << " (every op at its type's typical time)\n";
  out << pad("slowdown", 22) << format_number("%.3f", r.slowdown) << "\n\n";
  out << "slowdown each group alone causes (its ops at their measured times, the rest typical)\n";
  print_ranked(out, "  by stage", slowdowns_by_name(r.by_stage));
  print_ranked(out, "  by data-parallel rank", slowdowns_by_name(r.by_dp_rank));
  print_ranked(out, "  by op type", r.by_op);
}

}  // namespace pipetwin
