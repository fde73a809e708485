#include "report/freeze_page.h"

#include "report/chart.h"
#include "report/gantt.h"
#include "report/run_page.h"
#include "report/text_units.h"

namespace pipetwin {

void add_freeze_sections(HtmlPage& page, const TrainingRun& run,
                         const std::vector<std::pair<std::string, std::string>>& headline) {
  page.add_section("Headline numbers", headline_html(headline));
  std::vector<Bar> bars;
  for (const TrainingPhase& p : run.phases) {
    bars.push_back({"iterations " + std::to_string(p.first_iteration) + "-" +
                        std::to_string(p.first_iteration + p.iterations - 1) + ", " +
                        std::to_string(p.plan.frozen_layers) + " frozen",
                    p.iteration_time_s * p.iterations, false,
                    "(" + format_seconds(p.iteration_time_s) + " per iteration)"});
  }
  page.add_section("Training time per phase",
                   render_bar_chart("Time spent in each phase", bars, Unit::kSeconds));

  LineChart frozen;
  frozen.title = "Frozen layers over the iterations; dashed: a migration";
  frozen.css_class = "chart frozen";
  frozen.x_label = "iteration";
  frozen.y_label = "frozen layers";
  LineSeries series{"frozen prefix", {}, true};
  for (const TrainingPhase& p : run.phases) {
    series.points.emplace_back(p.first_iteration, p.plan.frozen_layers);
  }
  if (!run.phases.empty()) {
    const TrainingPhase& last = run.phases.back();
    series.points.emplace_back(last.first_iteration + last.iterations, last.plan.frozen_layers);
  }
  frozen.series.push_back(std::move(series));
  std::vector<std::vector<std::string>> rows;
  for (const Migration& m : run.migrations) {
    frozen.vlines.emplace_back(m.iteration, format_bytes(static_cast<double>(m.bytes)));
    rows.push_back({std::to_string(m.iteration), format_bytes(static_cast<double>(m.bytes)),
                    format_seconds(m.seconds)});
  }
  page.add_section(
      "Frozen layers and migrations",
      render_line_chart(frozen) +
          (rows.empty() ? paragraph_html("No migration: the placement never changed.", "note")
                        : table_html({"before iteration", "moved", "took"}, rows)));

  GanttOptions options = gantt_options_for(run.overview);
  options.title = "one iteration of every phase, back to back";
  GanttStats stats;
  const std::string gantt = render_gantt(run.overview, options, &stats);
  page.add_section("Timeline of the phases",
                   gantt_legend() + gantt +
                       paragraph_html(aggregation_note(stats.spans, stats.aggregated), "note"));
}

}  // namespace pipetwin
