#include "app/run_files.h"

#include <algorithm>

#include "app/run_summary.h"
#include "report/html_page.h"
#include "report/run_page.h"
#include "report/text_units.h"
#include "traces/atomic_file.h"
#include "traces/chrome_trace.h"
#include "traces/timeline_proto_io.h"

namespace pipetwin {

void write_run_report(const std::string& path, const SimulationResult& result,
                      const RunMetrics& metrics, const std::vector<std::string>& notes) {
  const ResolvedScenario& setup = result.setup;
  RunReport report;
  report.timeline = &result.timeline;
  report.headline = headline_numbers(metrics);
  report.notes = notes;
  for (const TimelineDevice& device : result.timeline.devices) {
    const bool known =
        device.id >= 0 && device.id < static_cast<int32_t>(setup.cluster.devices.size());
    report.memory.capacity_bytes.push_back(
        known ? static_cast<double>(setup.cluster.devices[device.id].memory_bytes) : 0);
    report.memory.peak_ops.push_back(known && device.id <
                                                  static_cast<int32_t>(result.memory.peaks.size())
                                         ? peak_memory_op(result, device.id)
                                         : "");
  }
  HtmlPage page(setup.name + ": pipetwin report", run_context(result));
  add_run_sections(page, report);
  write_html_report(path, page);
}

void write_timeline_report(const std::string& path, const std::vector<std::string>& names,
                           const std::vector<Timeline>& timelines) {
  std::string context;
  for (size_t k = 0; k < timelines.size(); ++k) {
    context += (k ? ", " : "") + names[k] + " (" + timelines[k].source + ")";
  }
  HtmlPage page("pipetwin report", context);
  for (size_t k = 0; k < timelines.size(); ++k) {
    int32_t iterations = 1;
    for (const Span& span : timelines[k].spans)
      iterations = std::max(iterations, span.iteration + 1);
    RunReport report;
    report.timeline = &timelines[k];
    report.headline = headline_numbers(compute_metrics(timelines[k], iterations, 0));
    // A timeline does not know its batch: no throughput.
    report.headline.erase(report.headline.begin() + 2);
    page.add_section(names[k], paragraph_html(std::to_string(iterations) + " iteration" +
                                                  (iterations > 1 ? "s" : "") + ", " +
                                                  std::to_string(timelines[k].devices.size()) +
                                                  " devices, " + timelines[k].source,
                                              "note"));
    add_run_sections(page, report, timelines.size() > 1 ? names[k] : "");
  }
  write_html_report(path, page);
}

void write_run_files(const Timeline& timeline, const std::string& trace_path,
                     const std::string& timeline_path) {
  if (!trace_path.empty()) {
    write_file_atomically(trace_path,
                          [&](std::ostream& out) { write_chrome_trace(timeline, out); });
  }
  if (!timeline_path.empty()) write_timeline_file(timeline, timeline_path);
}

}  // namespace pipetwin
