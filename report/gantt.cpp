#include "report/gantt.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <vector>

#include "analysis/intervals.h"
#include "analysis/metrics.h"
#include "report/chart.h"
#include "report/svg.h"
#include "report/text_units.h"

namespace pipetwin {
namespace {

constexpr double kLabel = 96, kAxis = 30, kRow = 28, kComputeH = 16, kCommY = 18, kCommH = 8;

// Op kinds and their CSS classes (colours in the page's style sheet).
struct OpKind {
  const char* css;
  const char* legend;
};
constexpr std::array<OpKind, 10> kKinds = {{{"f", "forward"},
                                            {"b", "backward"},
                                            {"bi", "backward (input)"},
                                            {"bw", "backward (weights)"},
                                            {"s", "send"},
                                            {"r", "receive"},
                                            {"a", "all-reduce / collective"},
                                            {"o", "optimizer"},
                                            {"x", "other"},
                                            {"exp", "exposed communication"}}};
constexpr int kExposed = 9;

int kind_of(const Span& span) {
  const std::string& op = span.op;
  if (op == "FWD") return 0;
  if (op == "BWD") return 1;
  if (op == "BWD_INPUT") return 2;
  if (op == "BWD_WEIGHT") return 3;
  if (op == "OPTIM") return 7;
  if (span.lane == "send" || op.rfind("SEND", 0) == 0) return 4;
  if (span.lane == "recv" || op.rfind("RECV", 0) == 0) return 5;
  if (span.lane == "collective" || span.lane == "data-parallel" || op == "ALLREDUCE") return 6;
  return 8;
}

struct Mark {
  double x0 = 0, x1 = 0;
  int kind = 0;
  const Span* span = nullptr;  // null for exposed communication
};

// One lane strip: marks a pixel wide or more one by one, the rest one mark per column.
class Strip {
 public:
  Strip(SvgWriter& svg, double y, double h, bool tips, const std::string& device, GanttStats& s)
      : svg_(svg), y_(y), h_(h), tips_(tips), device_(device), stats_(s) {}

  void draw(std::vector<Mark>& marks) {
    std::sort(marks.begin(), marks.end(), [](const Mark& a, const Mark& b) { return a.x0 < b.x0; });
    std::map<long, std::pair<std::array<double, kKinds.size()>, int64_t>> columns;
    for (const Mark& m : marks) {
      if (m.x1 - m.x0 >= 1) {
        svg_.rect(kLabel + m.x0, y_, m.x1 - m.x0, h_, kKinds[m.kind].css, tip(m));
        ++stats_.marks;
        continue;
      }
      auto& column = columns[static_cast<long>(std::floor(m.x0))];
      column.first[m.kind] += std::max(m.x1 - m.x0, 1e-9);
      ++column.second;
      if (m.span) ++stats_.aggregated;
    }
    for (const auto& [column, fill] : columns) {
      const auto& share = fill.first;
      const int kind =
          static_cast<int>(std::max_element(share.begin(), share.end()) - share.begin());
      svg_.rect(kLabel + static_cast<double>(column), y_, 1, h_,
                std::string(kKinds[kind].css) + " agg",
                tips_ ? std::to_string(fill.second) + " marks narrower than a pixel" : "");
      ++stats_.marks;
    }
  }

 private:
  std::string tip(const Mark& m) const {
    if (!tips_) return "";
    if (!m.span) return device_ + " exposed communication";
    const Span& s = *m.span;
    return device_ + " " + s.name + " " + s.op + ", " + format_seconds(s.duration_s());
  }

  SvgWriter& svg_;
  double y_, h_;
  bool tips_;
  const std::string& device_;
  GanttStats& stats_;
};

}  // namespace

GanttOptions gantt_options_for(const Timeline& timeline) {
  GanttOptions options;
  const SpanExtent extent = span_extent(timeline);
  options.origin_s = extent.first_s;
  options.span_s = extent.last_s - extent.first_s;
  return options;
}

std::string render_gantt(const Timeline& timeline, const GanttOptions& options,
                         GanttStats* stats_out) {
  GanttStats stats;
  const double span_s = options.span_s > 0 ? options.span_s : 1;
  const double px_per_s = options.plot_px / span_s;
  const double height = kAxis + kRow * static_cast<double>(timeline.devices.size()) + 4;
  char seconds_per_px[32];
  std::snprintf(seconds_per_px, sizeof seconds_per_px, "%.9g", 1 / px_per_s);
  SvgWriter svg(kLabel + options.plot_px + 10, height, "gantt",
                {{"data-x0", svg_number(kLabel)}, {"data-spp", seconds_per_px}});
  svg.text(0, 12, options.title, "title");
  for (double t : axis_ticks(0, span_s, Unit::kSeconds)) {
    const double x = kLabel + t * px_per_s;
    svg.line(x, kAxis - 6, x, height, "grid");
    svg.text(x, kAxis - 8, format_tick(t, Unit::kSeconds), "tick middle");
  }

  std::map<int32_t, size_t> row;
  for (const TimelineDevice& d : timeline.devices) row.emplace(d.id, row.size());
  std::vector<std::vector<Mark>> compute(row.size()), comm(row.size());
  std::vector<Intervals> busy(row.size()), transfers(row.size());
  const auto x_of = [&](double t) {
    return std::clamp((t - options.origin_s) * px_per_s, 0.0, options.plot_px);
  };
  for (const Span& span : timeline.spans) {
    const auto found = row.find(span.device);
    if (found == row.end()) continue;
    ++stats.spans;
    if (!std::isfinite(span.start_s) || !std::isfinite(span.end_s)) continue;  // not drawable
    const Mark mark{x_of(span.start_s), x_of(span.end_s), kind_of(span), &span};
    if (span.lane == "compute") {
      compute[found->second].push_back(mark);
      busy[found->second].emplace_back(span.start_s, span.end_s);
    } else {
      comm[found->second].push_back(mark);
      transfers[found->second].emplace_back(span.start_s, span.end_s);
    }
  }
  const bool tips = stats.spans <= options.max_span_tips;
  for (const TimelineDevice& d : timeline.devices) {
    const size_t k = row[d.id];
    const double y = kAxis + kRow * static_cast<double>(k);
    svg.open("g", {{"class", "lane"},
                   {"data-device", std::to_string(d.id)},
                   {"transform", "translate(0," + svg_number(y) + ")"}});
    svg.text(kLabel - 8, 13, d.name, "tick end");
    svg.rect(kLabel, 0, options.plot_px, kComputeH, "track");
    Strip(svg, 0, kComputeH, tips, d.name, stats).draw(compute[k]);
    Strip(svg, kCommY, kCommH, tips, d.name, stats).draw(comm[k]);
    std::vector<Mark> exposed;
    for (const auto& [lo, hi] : uncovered(merged(transfers[k]), merged(busy[k]))) {
      exposed.push_back({x_of(lo), x_of(hi), kExposed, nullptr});
    }
    Strip(svg, kCommY, kCommH, tips, d.name, stats).draw(exposed);
    svg.close("g");
  }
  if (stats_out) *stats_out = stats;
  return svg.finish();
}

std::string gantt_legend() {
  std::string html = "<div class=\"legend\">";
  for (const OpKind& kind : kKinds) {
    html +=
        "<span><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"12\" height=\"12\"><rect "
        "width=\"12\" height=\"12\" class=\"" +
        std::string(kind.css) + "\"/></svg> " + kind.legend + "</span>";
  }
  return html + "</div>";
}

}  // namespace pipetwin
