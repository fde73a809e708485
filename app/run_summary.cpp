#include "app/run_summary.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <sstream>

#include "report/text_units.h"
#include "scenario.pb.h"

namespace pipetwin {
namespace {

bool is_oom(const SimulationResult& result, int32_t device) {
  return std::find(result.out_of_memory.begin(), result.out_of_memory.end(), device) !=
         result.out_of_memory.end();
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

std::string peak_memory_op(const SimulationResult& result, int32_t device) {
  const int32_t i = result.memory.peaks[device].instruction;
  return i >= 0 ? result.program.text(i) : "";
}

nlohmann::json run_summary_json(const SimulationResult& result, const RunMetrics& metrics) {
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
         {"collective_s", d.collective_s},
         {"exposed_collective_s", d.exposed_collective_s},
         {"peak_memory_bytes", static_cast<int64_t>(d.peak_memory_bytes)},
         {"peak_memory_op", peak_memory_op(result, d.id)},
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
          {"collective_s", metrics.collective_s},
          {"exposed_collective_s", metrics.exposed_collective_s},
          {"out_of_memory", !result.out_of_memory.empty()},
          {"devices", devices},
          {"links", links}};
}

void print_run_summary(std::ostream& out, const SimulationResult& result,
                       const RunMetrics& metrics) {
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
        << (peak_memory_op(result, d.id).empty() ? "start" : peak_memory_op(result, d.id))
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
    for (int32_t r : setup.schedule.stage_replicas) {
      if (!counts.empty()) counts += ',';
      counts += std::to_string(r);
    }
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
  // What compute did not hide of one kind of communication, as HTA counts it.
  const auto exposed = [&](const char* label, double exposed_s, double total_s, const char* what) {
    if (total_s <= 0) return;
    numbers.emplace_back(label, format_seconds(exposed_s) + " of " + format_seconds(total_s) + " " +
                                    what + ", summed over devices (" +
                                    format_number("%.1f%%", 100 * (1 - exposed_s / total_s)) +
                                    " hidden by compute)");
  };
  exposed("exposed comm", metrics.exposed_comm_s, metrics.comm_s, "p2p");
  exposed("exposed coll.", metrics.exposed_collective_s, metrics.collective_s, "collectives");
  return numbers;
}

}  // namespace pipetwin
