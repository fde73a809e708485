// `compare`'s comparison and its JSON object, shared by the command line and the Python
// module (pipetwin.compare).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "analysis/timeline_comparison.h"
#include "traces/timeline.h"

namespace pipetwin {

// A is the reference, errors are B - A. Throws RuntimeFailure when no span of one has a
// partner in the other (timelines of different programs); the names say which in messages.
TimelineComparison compare_or_fail(const Timeline& a, const std::string& name_a, const Timeline& b,
                                   const std::string& name_b);

// The object `compare --json` prints; name_a and name_b are the "a" and "b" fields.
nlohmann::json comparison_json(const TimelineComparison& c, const std::string& name_a,
                               const std::string& name_b,
                               const std::pair<std::string, std::string>& labels, const Timeline& a,
                               const Timeline& b);

}  // namespace pipetwin
