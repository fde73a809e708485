#include "report/run_page.h"

#include "analysis/time_breakdown.h"
#include "report/breakdown_chart.h"
#include "report/gantt.h"

namespace pipetwin {

std::string aggregation_note(int64_t spans, int64_t aggregated) {
  std::string note = std::to_string(spans);
  note += " spans.";
  if (aggregated > 0) {
    note += ' ';
    note += std::to_string(aggregated);
    note +=
        " of them are narrower than a pixel: each pixel column of a lane draws them as "
        "one mark, coloured by the op that filled most of it.";
  }
  return note + " Hover for details; the export to Chrome/Perfetto (--trace) has every span.";
}

void add_run_sections(HtmlPage& page, const RunReport& report, const std::string& heading) {
  const Timeline& timeline = *report.timeline;
  const std::string prefix = heading.empty() ? "" : heading + ": ";
  std::string summary = headline_html(report.headline);
  for (const std::string& note : report.notes) summary += paragraph_html(note, "note");
  page.add_section(prefix + "Headline numbers", summary);

  GanttOptions options = gantt_options_for(timeline);
  options.plot_px = report.gantt_px;
  options.title = timeline.source + ", " + std::to_string(timeline.devices.size()) + " devices";
  GanttStats stats;
  const std::string gantt = render_gantt(timeline, options, &stats);
  page.add_section(prefix + "Timeline per device",
                   gantt_legend() + gantt +
                       paragraph_html("Compute above, transfers below each lane; hatched: "
                                      "communication no compute hides. " +
                                          aggregation_note(stats.spans, stats.aggregated),
                                      "note"));

  const std::string memory = render_memory_chart(timeline, report.memory);
  page.add_section(
      prefix + "Memory over time",
      memory.empty() ? paragraph_html("The timeline has no memory counters.", "note") : memory);
  const std::string links = render_link_chart(timeline);
  page.add_section(
      prefix + "Link utilisation",
      links.empty() ? paragraph_html("The timeline has no link counters.", "note") : links);
  page.add_section(prefix + "Where the time went",
                   paragraph_html("Every instant of the run on each device, in one of five "
                                  "parts (after Holistic Trace Analysis); each bar is the "
                                  "whole run.",
                                  "note") +
                       render_breakdown(time_breakdown(timeline)));
}

}  // namespace pipetwin
