#include "cli/report.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <sstream>

#include "report/html_page.h"
#include "report/run_page.h"
#include "report/text_units.h"
#include "scenario.pb.h"
#include "traces/atomic_file.h"
#include "traces/chrome_trace.h"
#include "traces/timeline_proto_io.h"

namespace pipetwin {
namespace {

bool is_oom(const SimulationResult& result, int32_t device) {
  return std::find(result.out_of_memory.begin(), result.out_of_memory.end(), device) !=
         result.out_of_memory.end();
}

std::string peak_op(const SimulationResult& result, int32_t device) {
  const int32_t i = result.memory.peaks[device].instruction;
  return i >= 0 ? result.program.text(i) : "";
}

// No communication, no ratio: null rather than a number that would claim 0% or 100%.
nlohmann::json overlap_json(const std::optional<double>& ratio) {
  return ratio ? nlohmann::json(*ratio) : nlohmann::json(nullptr);
}

// One per stage: 1 everywhere unless the scenario replicates stages.
nlohmann::json stage_replicas_json(const ResolvedScenario& setup) {
  if (setup.schedule.stage_replicas.empty()) {
    return std::vector<int32_t>(setup.schedule.stages, 1);
  }
  return setup.schedule.stage_replicas;
}

}  // namespace

nlohmann::json report_json(const SimulationResult& result, const RunMetrics& metrics) {
  const ResolvedScenario& setup = result.setup;
  nlohmann::json devices = nlohmann::json::array();
  for (const DeviceMetrics& d : metrics.devices) {
    devices.push_back(
        {{"id", d.id},
         {"name", d.name},
         {"node", setup.cluster.devices[d.id].node},
         {"busy_s", d.busy_s},
         {"bubble_ratio", d.bubble_ratio},
         {"comm_s", d.comm_s},
         {"exposed_comm_s", d.exposed_comm_s},
         {"overlap_ratio", overlap_json(d.overlap_ratio)},
         {"peak_memory_bytes", static_cast<int64_t>(d.peak_memory_bytes)},
         {"peak_memory_op", peak_op(result, d.id)},
         {"memory_capacity_bytes", static_cast<int64_t>(setup.cluster.devices[d.id].memory_bytes)},
         {"out_of_memory", is_oom(result, d.id)}});
  }
  nlohmann::json links = nlohmann::json::array();
  for (const LinkUsage& link : result.links) {
    double peak = 0;
    for (const auto& [time, value] : link.utilization) peak = std::max(peak, value);
    links.push_back(
        {{"name", link.name},
         {"bandwidth_bytes_per_s", link.bandwidth_bytes_per_s},
         {"bytes", link.bytes},
         {"busy_s", link.busy_s},
         {"busy_fraction", metrics.makespan_s > 0 ? link.busy_s / metrics.makespan_s : 0},
         {"peak_utilization", peak}});
  }
  return {{"scenario", setup.name},
          {"engine", result.timeline.source},
          {"schedule", proto::ScheduleKind_Name(setup.schedule.kind)},
          {"stages", setup.schedule.stages},
          {"virtual_stages", setup.schedule.virtual_stages},
          {"data_parallel", setup.training.data_parallel},
          {"stage_replicas", stage_replicas_json(setup)},
          {"microbatches", setup.training.microbatches},
          {"global_batch", setup.training.global_batch},
          {"iterations", setup.training.iterations},
          {"instructions", result.program.size()},
          {"iteration_time_s", metrics.iteration_time_s},
          {"training_time_s", metrics.makespan_s},
          {"throughput_samples_per_s", metrics.throughput_samples_per_s},
          {"bubble_ratio", metrics.bubble_ratio},
          {"comm_overlap", setup.schedule.comm_overlap},
          {"comm_s", metrics.comm_s},
          {"exposed_comm_s", metrics.exposed_comm_s},
          {"out_of_memory", !result.out_of_memory.empty()},
          {"devices", devices},
          {"links", links}};
}

void print_report(std::ostream& out, const SimulationResult& result, const RunMetrics& metrics) {
  const ResolvedScenario& setup = result.setup;
  out << run_context(result) << "\n\n";
  size_t name_width = 8;  // replicated stages name the stage and replica too
  for (const DeviceMetrics& d : metrics.devices)
    name_width = std::max(name_width, d.name.size() + 2);
  out << pad("device", name_width) << pad("node", 6) << pad("busy", 12) << pad("bubble", 8)
      << pad("exposed comm", 14) << "peak memory (GiB)\n";
  for (const DeviceMetrics& d : metrics.devices) {
    const DeviceSpec& spec = setup.cluster.devices[d.id];
    out << pad(d.name, name_width) << pad(std::to_string(spec.node), 6)
        << pad(format_seconds(d.busy_s), 12)
        << pad(format_number("%.1f%%", d.bubble_ratio * 100), 8)
        << pad(format_seconds(d.exposed_comm_s), 14) << format_gib(d.peak_memory_bytes) << " / "
        << format_gib(spec.memory_bytes) << "  at "
        << (peak_op(result, d.id).empty() ? "start" : peak_op(result, d.id))
        << (is_oom(result, d.id) ? "  OUT OF MEMORY" : "") << "\n";
  }
  std::vector<const LinkUsage*> busiest;
  for (const LinkUsage& link : result.links) busiest.push_back(&link);
  std::stable_sort(busiest.begin(), busiest.end(),
                   [](const LinkUsage* a, const LinkUsage* b) { return a->busy_s > b->busy_s; });
  if (busiest.size() > 3) busiest.resize(3);
  if (!busiest.empty()) {
    out << "\n" << pad("busiest link", 26) << pad("busy", 8) << "carried\n";
    for (const LinkUsage* link : busiest) {
      out << pad(link->name, 26)
          << pad(format_number("%.1f%%", 100 * link->busy_s / metrics.makespan_s), 8)
          << format_number("%.2f GB", link->bytes / 1e9) << "\n";
    }
  }
  out << "\n";
  for (const auto& [label, value] : headline_numbers(metrics))
    out << pad(label, 16) << value << "\n";
}

std::string run_context(const SimulationResult& result) {
  const ResolvedScenario& setup = result.setup;
  std::ostringstream out;
  out << setup.name << ": " << proto::ScheduleKind_Name(setup.schedule.kind) << ", "
      << setup.schedule.stages << " stages";
  if (setup.schedule.virtual_stages > 1) out << " x " << setup.schedule.virtual_stages << " chunks";
  if (setup.training.data_parallel > 1) out << ", " << setup.training.data_parallel << " replicas";
  if (!setup.schedule.stage_replicas.empty()) {
    std::string counts;
    for (int32_t r : setup.schedule.stage_replicas)
      counts += (counts.empty() ? "" : ",") + std::to_string(r);
    out << ", stage replicas " << counts;
  }
  if (!setup.schedule.comm_overlap) out << ", blocking transfers";
  out << ", " << setup.training.microbatches << " microbatches of a " << setup.training.global_batch
      << "-sample batch, " << setup.training.iterations << " iteration"
      << (setup.training.iterations > 1 ? "s" : "") << ", engine " << result.timeline.source;
  return out.str();
}

std::vector<std::pair<std::string, std::string>> headline_numbers(const RunMetrics& metrics) {
  std::vector<std::pair<std::string, std::string>> numbers = {
      {"iteration time", format_seconds(metrics.iteration_time_s)},
      {"training time", format_seconds(metrics.makespan_s)},
      {"throughput", format_number("%.1f samples/s", metrics.throughput_samples_per_s)},
      {"bubble", format_number("%.1f%%", metrics.bubble_ratio * 100)}};
  if (metrics.comm_s > 0) {
    numbers.emplace_back(
        "exposed comm",
        format_seconds(metrics.exposed_comm_s) + " of " + format_seconds(metrics.comm_s) +
            " p2p, summed over devices (" +
            format_number("%.1f%%", 100 * (1 - metrics.exposed_comm_s / metrics.comm_s)) +
            " hidden by compute)");
  }
  return numbers;
}

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
                                         ? peak_op(result, device.id)
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
