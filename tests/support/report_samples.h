// One small report of every kind, rendered by the library as the commands render them
// (the commands' own end-to-end tests are in tests/cli/report_cli_test.cpp). Small on
// purpose: the browser tests load each, also under AddressSanitizer.
#pragma once

#include <map>
#include <string>

#include "analysis/metrics.h"
#include "analysis/timeline_comparison.h"
#include "report/compare_page.h"
#include "report/freeze_page.h"
#include "report/goodput_page.h"
#include "report/html_page.h"
#include "report/plan_page.h"
#include "report/run_page.h"
#include "report/sweep_page.h"
#include "report/whatif_page.h"
#include "sim/planner/planner_problem.h"
#include "sim/scenario/loaded_scenario.h"
#include "sim/scenario/resolve_scenario.h"
#include "sim/driver/simulate.h"

namespace pipetwin::testing {

inline SimulationResult simulated_quickstart() {
  return simulate(load_scenario("", {}), SimulationOptions{});
}

// The quickstart's report: 4 devices.
inline std::string run_report_html(const SimulationResult& result) {
  const RunMetrics metrics = compute_metrics(result.timeline, result.setup.training.iterations,
                                             result.setup.training.global_batch);
  RunReport report;
  report.timeline = &result.timeline;
  report.headline = {{"iteration time", "1 s"}};
  for (const TimelineDevice& d : result.timeline.devices) {
    report.memory.capacity_bytes.push_back(
        static_cast<double>(result.setup.cluster.devices[d.id].memory_bytes));
  }
  HtmlPage page("run", "the quickstart");
  add_run_sections(page, report);
  return page.render();
}

// The quickstart against itself with every backward 20% slower: 4 + 4 lanes.
inline std::string compare_report_html(const Timeline& a) {
  Timeline b = a;
  for (Span& span : b.spans) {
    if (span.op == "BWD") span.end_s = span.start_s + 1.2 * span.duration_s();
  }
  const TimelineComparison c = compare_timelines(a, b);
  CompareReport report{&a, &b, "simulated", "slower", &c, {{"makespan", "+1.00%"}}};
  HtmlPage page("compare", "two timelines");
  add_compare_sections(page, report);
  return page.render();
}

// Two varied fields of 3 and 2 values: 8 charts.
inline std::string sweep_report_html() {
  std::vector<SweepRow> rows;
  int64_t index = 0;
  for (const char* m : {"4", "8", "16"}) {
    for (const char* kind : {"GPIPE", "ONE_F_ONE_B"}) {
      SweepRow row;
      row.point.settings = {{"training.microbatches", m}, {"schedule.kind", kind}};
      row.result.status = PointStatus::kOk;
      row.result.iteration_time_s = 1.0 / std::stoi(m) + (kind[0] == 'G' ? 0.1 : 0);
      row.result.throughput_samples_per_s = 32 / row.result.iteration_time_s;
      row.result.bubble_ratio = 0.1 * static_cast<double>(index);
      row.result.peak_memory_bytes = 1e9 * static_cast<double>(index + 1);
      row.index = index++;
      row.grid_points = 6;
      rows.push_back(row);
    }
  }
  HtmlPage page("sweep", "six points");
  add_sweep_sections(page, {"training.microbatches", "schedule.kind"}, rows);
  return page.render();
}

// A 3-stage UMPIPE result made by hand, and the quickstart's PipeDream plan.
inline std::string plan_report_html() {
  UmpipeSearchResult result;
  result.best.stages = {{{4, 4, 8}, {8, 8}}, {{4, 4, 8}, {4, 4, 8}}, {{2, 6, 8}, {16}}};
  result.best_s = 0.8;
  result.baselines.gpipe_s = 1.0;
  result.baselines.one_f_one_b_s = 0.95;
  result.baselines.local_greedy_s = 0.9;
  result.baselines.global_dp.seconds = 0.85;
  result.baselines.global_dp.microbatches = 4;
  result.dgap.history = {1.0, 0.9, 0.85, 0.82, 0.8, 0.8};
  result.dgap.evaluations = 1200;
  HtmlPage page("plan", "a hand-made UMPIPE plan and the quickstart's PipeDream plan");
  add_umpipe_sections(page, result, 4);
  const ResolvedScenario setup = resolve_scenario(load_scenario("", {}));
  add_pipedream_sections(page, setup, plan_pipedream(planner_problem(setup)));
  return page.render();
}

// Three phases, two migrations, the quickstart's timeline as the overview.
inline std::string freeze_report_html(const Timeline& overview) {
  TrainingRun run;
  run.phases = {{{0, 4, 1, {2, 2, 2, 2}, 0}, 0, 10, 1.0},
                {{2, 2, 2, {2, 2}, 0}, 10, 10, 0.8},
                {{4, 2, 2, {1, 3}, 0}, 20, 10, 0.7}};
  run.migrations = {{10, 1 << 30, 0.2}, {20, 1 << 29, 0.1}};
  run.training_time_s = 25.3;
  run.overview = overview;
  HtmlPage page("freeze", "FreezePipe");
  add_freeze_sections(page, run, {{"training time", "25.300 s"}});
  return page.render();
}

// A whole run's three curves, a few points each.
inline std::string goodput_report_html() {
  GoodputCurves curves;
  curves.ettr_by_interval_s = {{60, 0.90}, {240, 0.937}, {960, 0.91}, {3840, 0.80}};
  curves.chosen_interval_s = 240;
  curves.ettr_by_gpus = {{2048, 0.99}, {16384, 0.937}, {131072, 0.70}};
  curves.days_by_gpus = {{8192, 290}, {16384, 148}, {32768, 80}};
  curves.gpus = 16384;
  HtmlPage page("goodput", "a whole run");
  add_goodput_sections(page, curves);
  return page.render();
}

// A measured job's attribution: four stages, two ranks, three op types.
inline std::string whatif_report_html() {
  WhatIfReport report;
  report.headline = {{"slowdown", "1.179"}};
  report.by_stage = {{"0", 0.998}, {"1", 0.983}, {"2", 0.982}, {"3", 1.232}};
  report.by_dp_rank = {{"0", 1.173}, {"1", 1.178}};
  report.by_op = {{"forward-compute", 1.087}, {"backward-compute", 1.074}, {"gc", 1.0}};
  HtmlPage page("whatif", "a measured job");
  add_whatif_sections(page, report);
  return page.render();
}

// Every kind, by name: run, compare, sweep, plan, freeze, goodput, whatif.
inline std::map<std::string, std::string> sample_reports() {
  const SimulationResult quickstart = simulated_quickstart();
  return {{"run", run_report_html(quickstart)},
          {"compare", compare_report_html(quickstart.timeline)},
          {"sweep", sweep_report_html()},
          {"plan", plan_report_html()},
          {"freeze", freeze_report_html(quickstart.timeline)},
          {"goodput", goodput_report_html()},
          {"whatif", whatif_report_html()}};
}

// The lanes each sample's Gantts have: one per device and Gantt.
inline std::map<std::string, int> sample_lanes() {
  return {{"run", 4},    {"compare", 8}, {"sweep", 0}, {"plan", 0},
          {"freeze", 4}, {"goodput", 0}, {"whatif", 0}};
}

}  // namespace pipetwin::testing
