// `tune --report`: the Pareto front of throughput against peak memory (with the best and the
// scenario's own configuration marked and the memory limit drawn), the engine's best, and the
// skipped combinations by reason.
#pragma once

#include <vector>

#include "report/html_page.h"
#include "sim/tune/tune_search.h"

namespace pipetwin {

void add_tune_sections(HtmlPage& page, const TuneResult& result,
                       const std::vector<TunePoint>& simgrid);

}  // namespace pipetwin
