#include "report/compare_page.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "report/chart.h"
#include "report/gantt.h"
#include "report/run_page.h"
#include "report/svg.h"
#include "report/text_units.h"

namespace pipetwin {
namespace {

double quantile(const std::vector<double>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

// One row per op: whiskers from the smallest to the largest signed relative duration error
// (B / A - 1), the box from the 25th to the 75th percentile, a line at the median.
std::string error_distribution(const TimelineComparison& c, const CompareReport& r) {
  std::map<std::string, std::vector<double>> errors;
  for (const SpanDifference& d : c.differences) {
    if (d.duration_a_s != 0) errors[d.op].push_back(d.duration_b_s / d.duration_a_s - 1);
  }
  std::vector<std::string> ops;
  for (const OpComparison& op : c.per_op) {
    if (errors.count(op.op)) ops.push_back(op.op);
  }
  double lo = 0, hi = 0;
  for (auto& [op, list] : errors) {
    std::sort(list.begin(), list.end());
    lo = std::min(lo, list.front());
    hi = std::max(hi, list.back());
  }
  if (hi - lo < 1e-3) {
    lo -= 0.01;
    hi += 0.01;
  }
  constexpr double kLabel = 110, kPlot = 600, kRow = 26, kTop = 34;
  const double height = kTop + kRow * static_cast<double>(ops.size()) + 16;
  SvgWriter svg(kLabel + kPlot + 170, height, "chart errors");
  svg.text(8, 14,
           "Duration error per op, " + r.label_b + " / " + r.label_a +
               " - 1 (whiskers: smallest to largest; box: 25th to 75th percentile)",
           "title");
  const auto sx = [&](double v) { return kLabel + (v - lo) / (hi - lo) * kPlot; };
  for (int i = 0; i <= 4; ++i) {
    const double v = lo + (hi - lo) * i / 4;
    svg.line(sx(v), kTop - 6, sx(v), height - 10, "grid");
    svg.text(sx(v), kTop - 10, format_signed_percent(v), "tick middle");
  }
  if (lo < 0 && hi > 0) svg.line(sx(0), kTop - 6, sx(0), height - 10, "axis");
  for (size_t k = 0; k < ops.size(); ++k) {
    const std::vector<double>& list = errors[ops[k]];
    const double y = kTop + kRow * static_cast<double>(k);
    const double mid = y + kRow / 2 - 3;
    svg.open(
        "g",
        {{"class", "op-errors"}, {"data-op", ops[k]}, {"data-spans", std::to_string(list.size())}});
    svg.text(kLabel - 8, mid + 4, ops[k], "tick end");
    svg.line(sx(list.front()), mid, sx(list.back()), mid, "whisker");
    const double q1 = quantile(list, 0.25), q3 = quantile(list, 0.75), med = quantile(list, 0.5);
    svg.rect(sx(q1), y + 4, std::max(1.0, sx(q3) - sx(q1)), kRow - 14, "box",
             ops[k] + ": median " + format_signed_percent(med) + ", 25th to 75th percentile " +
                 format_signed_percent(q1) + " to " + format_signed_percent(q3) + ", " +
                 std::to_string(list.size()) + " spans");
    svg.line(sx(med), y + 4, sx(med), y + kRow - 10, "median");
    svg.text(kLabel + kPlot + 12, mid + 4,
             "median " + format_signed_percent(med) + " (" + std::to_string(list.size()) + ")",
             "legend");
    svg.close("g");
  }
  return svg.finish();
}

std::string worst_table(const std::vector<SpanDifference>& spans, bool durations,
                        const CompareReport& r) {
  std::vector<std::vector<std::string>> rows;
  for (const SpanDifference& d : spans) {
    const double a = durations ? d.duration_a_s : d.start_a_s;
    const double b = durations ? d.duration_b_s : d.start_b_s;
    rows.push_back({d.name, d.device_name, std::to_string(d.iteration), format_seconds(a),
                    format_seconds(b), format_signed_seconds(b - a)});
  }
  return table_html({durations ? "worst durations" : "worst starts", "device", "iteration",
                     r.label_a, r.label_b, r.label_b + " - " + r.label_a},
                    rows);
}

}  // namespace

void add_compare_sections(HtmlPage& page, const CompareReport& report) {
  const TimelineComparison& c = *report.comparison;
  page.add_section("Makespan and bubble", headline_html(report.headline));
  GanttOptions a = gantt_options_for(*report.a);
  GanttOptions b = gantt_options_for(*report.b);
  a.span_s = b.span_s = std::max(a.span_s, b.span_s);
  a.title = report.label_a + " (" + report.a->source + ")";
  b.title = report.label_b + " (" + report.b->source + ")";
  GanttStats stats_a, stats_b;
  const std::string gantt_a = render_gantt(*report.a, a, &stats_a);
  const std::string gantt_b = render_gantt(*report.b, b, &stats_b);
  page.add_section("Both timelines, one time axis",
                   gantt_legend() + gantt_a + gantt_b +
                       paragraph_html("Each from its own first span. " + report.label_a + ": " +
                                          aggregation_note(stats_a.spans, stats_a.aggregated) +
                                          " " + report.label_b + ": " +
                                          aggregation_note(stats_b.spans, stats_b.aggregated),
                                      "note"));
  page.add_section(
      "Errors per op",
      error_distribution(c, report) +
          paragraph_html(std::to_string(c.matched) + " spans matched, " +
                             std::to_string(c.unmatched_a) + " only in " + report.label_a + ", " +
                             std::to_string(c.unmatched_b) + " only in " + report.label_b + ".",
                         "note"));
  page.add_section("Worst spans", worst_table(c.worst_duration, true, report) +
                                      worst_table(c.worst_start, false, report));
}

}  // namespace pipetwin
