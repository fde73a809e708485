#include "app/whatif_run.h"

#include <algorithm>
#include <vector>

#include "report/text_units.h"

namespace pipetwin {
namespace {

template <class Key>
nlohmann::json slowdowns(const std::map<Key, double>& map) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [key, value] : map) {
    if constexpr (std::is_same_v<Key, std::string>) {
      j[key] = value;
    } else {
      j[std::to_string(key)] = value;
    }
  }
  return j;
}

// The groups by slowdown, largest first.
template <class Key>
void print_ranked(std::ostream& out, const std::string& title, const std::map<Key, double>& map) {
  std::vector<std::pair<Key, double>> ranked(map.begin(), map.end());
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  out << title << ":";
  for (const auto& [key, value] : ranked) {
    std::string name;
    if constexpr (std::is_same_v<Key, std::string>) {
      name = key;
    } else {
      name = std::to_string(key);
    }
    out << " " << name << " " << format_number("%.3f", value);
  }
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
          {"step_slowdown", slowdowns(r.step_slowdown)},
          {"by_stage", slowdowns(r.by_stage)},
          {"by_dp_rank", slowdowns(r.by_dp_rank)},
          {"by_op", slowdowns(r.by_op)}};
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
  print_ranked(out, "  by stage", r.by_stage);
  print_ranked(out, "  by data-parallel rank", r.by_dp_rank);
  print_ranked(out, "  by op type", r.by_op);
}

}  // namespace pipetwin
