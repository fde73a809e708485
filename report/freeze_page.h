// The report of a FreezePipe run (`simulate` of a scenario with freeze { ... }): the
// training time of each phase, the frozen layers over the iterations with the migrations
// marked, and the overview timeline (one iteration of every phase).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "report/html_page.h"
#include "sim/freeze/training_run.h"

namespace pipetwin {

// An <svg class="chart bars"> with a bar per phase, an <svg class="chart frozen"> and the
// migrations' table; `headline` as the text report prints it.
void add_freeze_sections(HtmlPage& page, const TrainingRun& run,
                         const std::vector<std::pair<std::string, std::string>>& headline);

}  // namespace pipetwin
