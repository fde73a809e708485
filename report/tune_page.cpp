#include "report/tune_page.h"

#include <string>

#include "report/chart.h"
#include "report/text_units.h"

namespace pipetwin {
namespace {

std::vector<std::string> point_row(const TunePoint& p) {
  return {config_name(p.config), format_seconds(p.iteration_time_s),
          format_number("%.2f", p.throughput_samples_per_s),
          format_gib(static_cast<double>(p.peak_memory_bytes)), evaluator_name(p.evaluator)};
}

const std::vector<std::string> kPointHeader = {"configuration", "iteration", "samples/s",
                                               "peak GiB", "evaluator"};

}  // namespace

void add_tune_sections(HtmlPage& page, const TuneResult& result,
                       const std::vector<TunePoint>& simgrid) {
  std::vector<std::pair<std::string, std::string>> headline = {
      {"evaluated", std::to_string(result.evaluated)},
      {"own", format_number("%.2f", result.own.throughput_samples_per_s) + " samples/s"}};
  if (result.best) {
    headline.push_back(
        {"best", format_number("%.2f", result.best->throughput_samples_per_s) + " samples/s"});
    headline.push_back(
        {"gain",
         format_number("%.3f", result.own.iteration_time_s / result.best->iteration_time_s) + "x"});
  }
  page.add_section("Search", headline_html(headline));

  LineChart chart;
  chart.title = "Pareto front: throughput against peak memory (fast evaluator)";
  chart.css_class = "chart pareto";
  chart.x_label = "peak GPU memory";
  chart.x_unit = Unit::kBytes;
  chart.y_label = "samples per second";
  LineSeries front{"Pareto front", {}, true};
  for (const TunePoint& p : result.pareto) {
    front.points.push_back({static_cast<double>(p.peak_memory_bytes), p.throughput_samples_per_s});
  }
  chart.series.push_back(front);
  chart.vlines.push_back({result.memory_limit_bytes, "memory limit"});
  if (result.best) {
    chart.markers.push_back({static_cast<double>(result.best->peak_memory_bytes),
                             result.best->throughput_samples_per_s, "best", "best",
                             config_name(result.best->config), "best"});
  }
  chart.markers.push_back({static_cast<double>(result.own.peak_memory_bytes),
                           result.own.throughput_samples_per_s, "own", "own",
                           config_name(result.own.config), "own"});
  page.add_section("Pareto front", render_line_chart(chart));

  std::vector<std::vector<std::string>> refined;
  for (const TunePoint& p : result.refined) refined.push_back(point_row(p));
  for (const TunePoint& p : simgrid) refined.push_back(point_row(p));
  page.add_section("The engine's best", table_html(kPointHeader, refined));

  std::vector<std::vector<std::string>> front_rows;
  for (const TunePoint& p : result.pareto) front_rows.push_back(point_row(p));
  page.add_section("Pareto front, point by point", table_html(kPointHeader, front_rows));

  std::vector<std::vector<std::string>> skipped;
  for (const auto& [reason, count] : result.skipped)
    skipped.push_back({reason, std::to_string(count)});
  page.add_section("Skipped", table_html({"reason", "count"}, skipped));
}

}  // namespace pipetwin
