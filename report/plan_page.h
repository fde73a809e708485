// The reports of `plan`: UMPIPE's convergence, its plan as a stage x microbatch-size heat
// map and the baselines as bars; PipeDream's stages and their replicas as a diagram.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "report/html_page.h"
#include "sim/planner/pipedream_planner.h"
#include "sim/spec/resolved_scenario.h"
#include "sim/umpipe/umpipe_search.h"

namespace pipetwin {

// The baselines the text report lists, named as it names them, with their iteration times.
std::vector<std::pair<std::string, double>> umpipe_baseline_rows(const UmpipeSearchResult& result,
                                                                 int32_t microbatches);

// An <svg class="chart convergence">, an <svg class="heat"> per direction (a <g
// class="stage-row" data-stage="S"> per stage) and an <svg class="chart bars"> of the
// baselines against the plan.
void add_umpipe_sections(HtmlPage& page, const UmpipeSearchResult& result, int32_t microbatches);

// "0-12,15,17-20": a DAG stage need not be one range of the layer order.
std::string layer_ranges_text(const std::vector<int>& layers);

// An <svg class="pipedream"> with a <g class="stage" data-stage="S" data-replicas="R"> per
// stage, a box per replica naming its device, arrows between the stages.
void add_pipedream_sections(HtmlPage& page, const ResolvedScenario& setup,
                            const PipedreamPlan& plan);

}  // namespace pipetwin
