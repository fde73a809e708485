#include "report/sweep_page.h"

#include <algorithm>
#include <map>

#include "report/chart.h"
#include "report/text_units.h"

namespace pipetwin {
namespace {

std::string table_status(const PointResult& r) {
  if (r.failed()) return "error: " + r.error;
  return r.out_of_memory ? "OUT OF MEMORY" : "ok";
}

struct Metric {
  const char* name;
  Unit unit;
  double PointResult::*value;
};
constexpr Metric kMetrics[kSweepMetrics] = {
    {"iteration time", Unit::kSeconds, &PointResult::iteration_time_s},
    {"throughput (samples/s)", Unit::kNumber, &PointResult::throughput_samples_per_s},
    {"bubble", Unit::kRatio, &PointResult::bubble_ratio},
    {"peak memory", Unit::kBytes, &PointResult::peak_memory_bytes}};

// The other fields' values of a row, as a series name.
std::string others_of(const SweepRow& row, size_t field) {
  std::string name;
  for (size_t f = 0; f < row.point.settings.size(); ++f) {
    if (f == field) continue;
    const auto& [path, value] = row.point.settings[f];
    name += (name.empty() ? "" : ", ") + path + "=" + value;
  }
  return name.empty() ? "all points" : name;
}

std::string sweep_chart(const Metric& metric, const std::string& path, size_t field,
                        const std::vector<const SweepRow*>& grid) {
  LineChart chart;
  chart.title = std::string(metric.name) + " against " + path;
  chart.css_class = "chart sweep";
  chart.data = {{"metric", metric.name}, {"field", path}};
  chart.x_label = path;
  chart.y_label = metric.name;
  chart.y_unit = metric.unit;
  chart.width = 600;
  chart.height = 260;
  std::map<std::string, size_t> category;
  for (const SweepRow* row : grid) {
    const std::string& value = row->point.settings[field].second;
    if (category.emplace(value, chart.x_categories.size()).second) {
      chart.x_categories.push_back(value);
    }
  }
  std::map<std::string, size_t> series;
  for (const SweepRow* row : grid) {
    const std::string name = others_of(*row, field);
    auto [it, fresh] = series.emplace(name, chart.series.size());
    if (fresh) chart.series.push_back({name, {}, false});
    if (row->result.failed()) continue;
    chart.series[it->second].points.emplace_back(
        static_cast<double>(category[row->point.settings[field].second]),
        row->result.*metric.value);
  }
  return render_line_chart(chart);
}

}  // namespace

SweepTable sweep_table(const std::vector<std::string>& paths, const std::vector<SweepRow>& rows) {
  SweepTable table;
  table.header = paths;
  for (const char* name :
       {"iteration time", "throughput (samples/s)", "bubble", "peak memory (GiB)", "status"}) {
    table.header.emplace_back(name);
  }
  for (const SweepRow& row : rows) {
    std::vector<std::string> line;
    for (const auto& setting : row.point.settings) line.push_back(setting.second);
    const PointResult& r = row.result;
    if (r.failed()) {
      line.insert(line.end(), 4, "-");
    } else {
      line.push_back(format_seconds(r.iteration_time_s));
      line.push_back(format_number("%.1f", r.throughput_samples_per_s));
      line.push_back(format_number("%.1f%%", r.bubble_ratio * 100));
      line.push_back(format_gib(r.peak_memory_bytes));
    }
    line.push_back(table_status(r));
    table.cells.push_back(std::move(line));
  }
  return table;
}

void add_sweep_sections(HtmlPage& page, const std::vector<std::string>& paths,
                        const std::vector<SweepRow>& rows) {
  std::vector<const SweepRow*> grid;
  for (const SweepRow& row : rows) grid.push_back(&row);
  std::stable_sort(grid.begin(), grid.end(),
                   [](const SweepRow* a, const SweepRow* b) { return a->index < b->index; });
  for (const Metric& metric : kMetrics) {
    std::string charts = "<div class=\"charts\">";
    for (size_t f = 0; f < paths.size(); ++f) charts += sweep_chart(metric, paths[f], f, grid);
    page.add_section(metric.name, charts + "</div>");
  }
  const SweepTable table = sweep_table(paths, rows);
  page.add_section("Every point, fastest first", table_html(table.header, table.cells));
}

}  // namespace pipetwin
