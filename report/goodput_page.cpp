#include "report/goodput_page.h"

#include "report/chart.h"

namespace pipetwin {
namespace {

LineChart curve_chart(const std::string& curve, const std::string& title, const std::string& series,
                      const std::vector<std::pair<double, double>>& points) {
  LineChart chart;
  chart.title = title;
  chart.css_class = "chart goodput";
  chart.data = {{"curve", curve}};
  chart.series = {{series, points}};
  return chart;
}

}  // namespace

void add_goodput_sections(HtmlPage& page, const GoodputCurves& curves) {
  LineChart interval = curve_chart("ettr-by-interval", "ETTR by checkpoint interval", "ETTR",
                                   curves.ettr_by_interval_s);
  interval.x_label = "checkpoint interval";
  interval.x_unit = Unit::kSeconds;
  interval.y_label = "effective training time";
  interval.y_unit = Unit::kRatio;
  interval.y_from_zero = false;
  interval.vlines = {{curves.chosen_interval_s, "chosen"}};
  page.add_section("Checkpoint interval",
                   render_line_chart(interval) +
                       paragraph_html("Too rare, and every failure throws away more work; too "
                                      "frequent, and the checkpoints themselves stop training."));

  LineChart size = curve_chart("ettr-by-gpus", "ETTR by cluster size", "ETTR", curves.ettr_by_gpus);
  size.x_label = "GPUs";
  size.y_label = "effective training time";
  size.y_unit = Unit::kRatio;
  size.y_from_zero = false;
  size.vlines = {{curves.gpus, "this run"}};
  page.add_section("Cluster size",
                   render_line_chart(size) +
                       paragraph_html("The same job on more replicas: failures as many times "
                                      "more frequent, each size at its own optimal interval."));

  if (!curves.days_by_gpus.empty()) {
    LineChart days =
        curve_chart("days-by-gpus", "Days to train by GPUs", "days", curves.days_by_gpus);
    days.x_label = "GPUs";
    days.y_label = "days";
    days.vlines = {{curves.gpus, "this run"}};
    page.add_section("Days to train",
                     render_line_chart(days) +
                         paragraph_html("Each point simulates the step with that many "
                                        "data-parallel replicas (the global batch held), "
                                        "then prices the run's failures and checkpoints."));
  }
}

}  // namespace pipetwin
