// `pipetwin whatif`: a measured job's slowdown from stragglers and who caused it
// (analysis/whatif.h), as text and as the JSON object `--json` prints.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <type_traits>

#include "analysis/whatif.h"

namespace pipetwin {

// A grouping's slowdowns keyed by the group's name (a stage's or rank's number as text).
template <class Key>
std::map<std::string, double> slowdowns_by_name(const std::map<Key, double>& groups) {
  std::map<std::string, double> named;
  for (const auto& [key, value] : groups) {
    if constexpr (std::is_same_v<Key, std::string>) {
      named[key] = value;
    } else {
      named[std::to_string(key)] = value;
    }
  }
  return named;
}

// Keys: step_s (measured), replayed_step_s, no_delay_step_s, ideal_step_s, slowdown,
// launch_slowdown, step_slowdown, by_stage, by_dp_rank, by_op (each a map to a slowdown).
nlohmann::json whatif_json(const WhatIfResult& result);

void print_whatif(std::ostream& out, const WhatIfResult& result);

}  // namespace pipetwin
