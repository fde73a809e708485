#include "sim/driver/simulate.h"

#include <algorithm>
#include <cstdio>

#include "sim/driver/build_program.h"
#include "sim/exec/interference.h"
#include "sim/exec/make_timeline.h"
#include "sim/scenario/resolve_scenario.h"
#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

std::string gib(double bytes) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2f GiB", bytes / (1024.0 * 1024.0 * 1024.0));
  return buffer;
}

}  // namespace

SimulationResult simulate(const LoadedScenario& loaded, const SimulationOptions& options) {
  return simulate_setup(resolve_scenario(loaded), options);
}

SimulationResult simulate_setup(const ResolvedScenario& setup, const SimulationOptions& options) {
  check_resource_limits(setup, options.limits, {options.engine, options.timeline});
  Program program = build_program(setup);
  apply_interference(program, setup.cluster);
  return simulate_program(setup, std::move(program), options);
}

SimulationResult simulate_program(const ResolvedScenario& setup, Program program,
                                  const SimulationOptions& options) {
  SimulationResult result;
  result.setup = setup;
  result.program = std::move(program);
  result.times = execute(result.program, result.setup, options.engine);
  result.memory = memory_curve(result.program, result.times);

  for (int32_t d = 0; d < result.program.num_devices; ++d) {
    const MemoryPeak& peak = result.memory.peaks[d];
    const DeviceSpec& device = result.setup.cluster.devices[d];
    if (static_cast<double>(peak.bytes) <= device.memory_bytes) continue;
    result.out_of_memory.push_back(d);
    if (options.allow_oom) continue;
    const std::string at =
        peak.instruction >= 0 ? " at " + result.program.text(peak.instruction) : " before any op";
    throw RuntimeFailure(device.name + " runs out of memory: it needs " + gib(peak.bytes) + at +
                         ", more than its " + gib(device.memory_bytes) +
                         " (cluster.gpu.memory_gib). Use more stages, more microbatches, "
                         "1F1B, activation offload (schedule.offload), or pass --allow-oom "
                         "to report it instead.");
  }
  // Offloaded activations share their node's host memory, which is finite too. (The devices
  // grouped by node in one pass: a loop over devices per node grows as their product.)
  std::vector<std::vector<const MemorySamples*>> node_curves(result.setup.cluster.nodes);
  for (int32_t d = 0; d < result.program.num_devices; ++d) {
    const int32_t node = result.setup.cluster.devices[d].node;
    if (node >= 0 && node < result.setup.cluster.nodes) {
      node_curves[node].push_back(&result.memory.host_samples[d]);
    }
  }
  for (int32_t n = 0; n < result.setup.cluster.nodes; ++n) {
    const MemoryPeak peak = combined_peak(node_curves[n]);
    if (static_cast<double>(peak.bytes) <= result.setup.cluster.host_memory_bytes) continue;
    throw RuntimeFailure("node " + std::to_string(n) + " runs out of host memory: offloaded " +
                         "activations need " + gib(peak.bytes) + ", more than its " +
                         gib(result.setup.cluster.host_memory_bytes) +
                         " (cluster.host_memory_gib). Offload fewer stages or a smaller "
                         "schedule.offload.fraction.");
  }
  if (const std::optional<Topology> topology =
          accounting_topology(result.program, result.setup, options.engine)) {
    result.links = link_usage(result.program, result.setup.cluster, *topology, result.times);
  }
  if (options.timeline) {
    result.timeline = make_timeline(result.program, result.setup.cluster, result.times,
                                    result.memory, engine_name(options.engine));
    add_link_counters(result.timeline, result.links);
  } else {
    result.timeline.source = engine_name(options.engine);
    result.timeline.devices = timeline_devices(result.program, result.setup.cluster);
  }
  return result;
}

}  // namespace pipetwin
