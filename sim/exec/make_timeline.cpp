#include "sim/exec/make_timeline.h"

#include <algorithm>

namespace pipetwin {
namespace {

// With replicated stages, which stage and replica a device is: " (stage 1 replica 0)".
std::string replica_label(const Program& program, int32_t device) {
  int32_t first = 0;
  for (size_t s = 0; s < program.stage_replicas.size(); ++s) {
    const int32_t count = program.stage_replicas[s];
    if (device < first + count) {
      return " (stage " + std::to_string(s) + " replica " + std::to_string(device - first) + ")";
    }
    first += count;
  }
  return "";
}

// With tensor, context or data parallelism, a GPU's place in the grid, Megatron-LM's ranks:
// " (tp 1, pp 2, dp 0)", with " cp 1" after tp under context parallelism. Devices run tp
// innermost, then cp, then pipeline device, then replica.
std::string grid_label(const Program& program, int32_t device) {
  const int32_t tp = program.tensor_parallel, cp = program.context_parallel;
  if (program.stage_device.empty() || !program.stage_replicas.empty()) return "";
  const int32_t pipeline_devices =
      *std::max_element(program.stage_device.begin(), program.stage_device.end()) / (tp * cp) + 1;
  const int32_t per_replica = tp * cp * pipeline_devices;
  if (tp * cp == 1 && program.num_devices <= per_replica) return "";
  return " (tp " + std::to_string(device % tp) +
         (cp > 1 ? ", cp " + std::to_string(device / tp % cp) : std::string()) + ", pp " +
         std::to_string(device % per_replica / (tp * cp)) + ", dp " +
         std::to_string(device / per_replica) + ")";
}

}  // namespace

std::vector<TimelineDevice> timeline_devices(const Program& program, const ClusterSpec& cluster) {
  std::vector<TimelineDevice> devices;
  for (int32_t d = 0; d < program.num_devices; ++d) {
    const DeviceSpec& device = cluster.devices[d];
    devices.push_back(
        {device.id, device.node, device.name + replica_label(program, d) + grid_label(program, d)});
  }
  return devices;
}

Timeline make_timeline(const Program& program, const ClusterSpec& cluster,
                       const ExecutionTimes& times, const MemoryCurve& memory,
                       const std::string& source) {
  Timeline timeline;
  timeline.source = source;
  timeline.devices = timeline_devices(program, cluster);
  timeline.spans.reserve(program.size());
  for (int32_t i = 0; i < program.size(); ++i) {
    const Instruction& instr = program.instructions[i];
    Span span;
    span.device = instr.device;
    span.lane = lane_name(instr.lane());
    span.name = program.text(i);
    span.op = op_name(instr.op);
    span.stage = instr.stage;
    span.microbatch = instr.op == Op::kOptim ? -1 : instr.microbatch;
    span.range_lo = instr.range.lo;
    span.range_hi = instr.range.hi;
    span.iteration = instr.iteration;
    span.start_s = times.start_s[i];
    span.end_s = times.end_s[i];
    if (is_collective(instr.op)) span.bytes = instr.bytes;
    if (is_transfer(instr.op)) {
      span.bytes = instr.bytes;
      span.peer_device = instr.peer_device;
      // A pair shares one id: the SEND's index, plus one so that 0 means "none".
      const int32_t send = is_send(instr.op) ? i : program.partner[i];
      span.flow_id = static_cast<uint64_t>(send) + 1;
    }
    timeline.spans.push_back(std::move(span));
  }
  for (int32_t d = 0; d < program.num_devices; ++d) {
    for (const auto& [time, bytes] : memory.samples[d]) {
      timeline.counters.push_back({d, kMemoryCounter, time, static_cast<double>(bytes)});
    }
  }
  return timeline;
}

void add_link_counters(Timeline& timeline, const std::vector<LinkUsage>& links) {
  // Sized once: at 16,384 GPUs the links change load tens of millions of times, and a
  // growing table would copy them over and over.
  size_t counters = timeline.counters.size();
  for (const LinkUsage& link : links) counters += link.utilization.size();
  timeline.counters.reserve(counters);
  for (int32_t l = 0; l < static_cast<int32_t>(links.size()); ++l) {
    timeline.links.push_back({l, links[l].name, links[l].bandwidth_bytes_per_s});
    for (const auto& [time, value] : links[l].utilization) {
      Counter counter;
      counter.name = kUtilizationCounter;
      counter.time_s = time;
      counter.value = value;
      counter.link = l;
      timeline.counters.push_back(counter);
    }
  }
}

void append_timeline(Timeline& into, const Timeline& part, double shift_s, int32_t iteration_shift,
                     uint64_t part_index) {
  into.source = part.source;
  for (const TimelineDevice& d : part.devices) {
    const bool known = std::any_of(into.devices.begin(), into.devices.end(),
                                   [&](const TimelineDevice& x) { return x.id == d.id; });
    if (!known) into.devices.push_back(d);
  }
  for (Span s : part.spans) {
    s.start_s += shift_s;
    s.end_s += shift_s;
    s.iteration += iteration_shift;
    if (s.flow_id) s.flow_id += part_index << 40;
    into.spans.push_back(s);
  }
  for (Counter c : part.counters) {
    if (c.link >= 0) continue;
    c.time_s += shift_s;
    into.counters.push_back(c);
  }
}

}  // namespace pipetwin
