#include "app/compare_run.h"

#include <vector>

#include "report/compare_page.h"
#include "report/html_page.h"
#include "report/text_units.h"
#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

// JSON has no infinity; nlohmann writes it as null, which is what a relative error with a
// zero reference should read as anyway.
nlohmann::json stats_json(const ErrorStats& s) {
  return {{"median_s", s.median_s},     {"p90_s", s.p90_s},     {"worst_s", s.worst_s},
          {"median_rel", s.median_rel}, {"p90_rel", s.p90_rel}, {"worst_rel", s.worst_rel}};
}

nlohmann::json difference_json(const SpanDifference& d) {
  return {{"name", d.name},
          {"device", d.device},
          {"device_name", d.device_name},
          {"op", d.op},
          {"stage", d.stage},
          {"iteration", d.iteration},
          {"start_a_s", d.start_a_s},
          {"start_b_s", d.start_b_s},
          {"duration_a_s", d.duration_a_s},
          {"duration_b_s", d.duration_b_s},
          {"duration_error_s", d.duration_error_s()},
          {"duration_error_rel", d.duration_error_rel()},
          {"start_error_s", d.start_error_s()}};
}

nlohmann::json peak_memory_json(const TimelineComparison& c) {
  nlohmann::json list = nlohmann::json::array();
  for (const TimelineComparison::PeakMemory& p : c.peak_memory) {
    list.push_back({{"device", p.device}, {"a_bytes", p.a_bytes}, {"b_bytes", p.b_bytes}});
  }
  return list;
}

nlohmann::json unmatched_json(const std::vector<UnmatchedSpan>& spans) {
  nlohmann::json list = nlohmann::json::array();
  for (const UnmatchedSpan& s : spans) {
    list.push_back({{"name", s.name},
                    {"device", s.device},
                    {"device_name", s.device_name},
                    {"range_lo", s.range_lo},
                    {"range_hi", s.range_hi},
                    {"iteration", s.iteration}});
  }
  return list;
}

}  // namespace

TimelineComparison compare_or_fail(const Timeline& a, const std::string& name_a, const Timeline& b,
                                   const std::string& name_b) {
  TimelineComparison c = compare_timelines(a, b);
  if (c.matched == 0) {
    throw RuntimeFailure("nothing to compare: none of the " + std::to_string(c.spans_a) +
                         " spans of " + name_a + " has a partner among the " +
                         std::to_string(c.spans_b) + " spans of " + name_b +
                         " (spans match on device, op, stage, sample range and iteration); "
                         "they are timelines of different programs");
  }
  return c;
}

nlohmann::json comparison_json(const TimelineComparison& c, const std::string& name_a,
                               const std::string& name_b,
                               const std::pair<std::string, std::string>& labels, const Timeline& a,
                               const Timeline& b) {
  nlohmann::json worst = nlohmann::json::array(), worst_start = nlohmann::json::array();
  for (const SpanDifference& d : c.worst_duration) worst.push_back(difference_json(d));
  for (const SpanDifference& d : c.worst_start) worst_start.push_back(difference_json(d));
  nlohmann::json per_op = nlohmann::json::object();
  for (const OpComparison& op : c.per_op) {
    per_op[op.op] = {{"matched", op.matched},
                     {"median_duration_error_s", op.median_duration_error_s},
                     {"median_duration_error_rel", op.median_duration_error_rel},
                     {"median_start_error_s", op.median_start_error_s},
                     {"total_a_s", op.total_a_s},
                     {"total_b_s", op.total_b_s}};
  }
  return {{"a", name_a},
          {"b", name_b},
          {"label_a", labels.first},
          {"label_b", labels.second},
          {"source_a", a.source},
          {"source_b", b.source},
          {"iterations_a", c.iterations_a},
          {"iterations_b", c.iterations_b},
          {"makespan_a_s", c.makespan_a_s},
          {"makespan_b_s", c.makespan_b_s},
          {"makespan_error", c.makespan_error},
          {"bubble_a", c.bubble_a},
          {"bubble_b", c.bubble_b},
          {"peak_memory", peak_memory_json(c)},
          {"spans_a", c.spans_a},
          {"spans_b", c.spans_b},
          {"matched", c.matched},
          {"unmatched_a", c.unmatched_a},
          {"unmatched_b", c.unmatched_b},
          {"first_unmatched_a", unmatched_json(c.first_unmatched_a)},
          {"first_unmatched_b", unmatched_json(c.first_unmatched_b)},
          {"duplicate_keys_a", c.duplicate_keys_a},
          {"duplicate_keys_b", c.duplicate_keys_b},
          {"duration_error", stats_json(c.duration_error)},
          {"start_error", stats_json(c.start_error)},
          {"worst", worst},
          {"worst_start", worst_start},
          {"per_op", per_op}};
}

// --report: the comparison as a page, its headline as the text report prints it.
void write_compare_report(const std::string& path, const TimelineComparison& c,
                          const std::pair<std::string, std::string>& labels, const Timeline& a,
                          const std::string& path_a, const Timeline& b, const std::string& path_b) {
  const std::string& la = labels.first;
  const std::string& lb = labels.second;
  CompareReport report{&a, &b, la, lb, &c, {}};
  report.headline = {{"makespan " + la, format_seconds(c.makespan_a_s)},
                     {"makespan " + lb, format_seconds(c.makespan_b_s)},
                     {"makespan " + lb + " vs " + la, format_signed_percent(c.makespan_error)},
                     {"bubble " + la, format_number("%.1f%%", 100 * c.bubble_a)},
                     {"bubble " + lb, format_number("%.1f%%", 100 * c.bubble_b)},
                     {"bubble " + lb + " vs " + la,
                      format_number("%+.1f points", 100 * (c.bubble_b - c.bubble_a))}};
  HtmlPage page("pipetwin compare: " + la + " and " + lb,
                la + ": " + path_a + " (" + a.source + "), " + lb + ": " + path_b + " (" +
                    b.source + "); errors are " + lb + " - " + la);
  add_compare_sections(page, report);
  write_html_report(path, page);
}

}  // namespace pipetwin
