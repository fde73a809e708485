// `compare`'s comparison, its JSON object and its HTML report, shared by the command line and
// the Python module (pipetwin.compare).
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

// --report of `compare`: the comparison as a page (docs/reports.md), its headline as the text
// summary prints it; path_a and path_b name the files in the page's context line.
void write_compare_report(const std::string& path, const TimelineComparison& c,
                          const std::pair<std::string, std::string>& labels, const Timeline& a,
                          const std::string& path_a, const Timeline& b, const std::string& path_b);

}  // namespace pipetwin
