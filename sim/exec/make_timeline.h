// Turns an executed Program into a Timeline: one span per instruction, flows between
// matching SEND and RECV, and a memory counter per device.
#pragma once

#include <string>

#include "sim/exec/execution_times.h"
#include "sim/exec/link_usage.h"
#include "sim/exec/memory_curve.h"
#include "sim/program/program.h"
#include "sim/spec/cluster_spec.h"
#include "traces/timeline.h"

namespace pipetwin {

inline constexpr const char* kMemoryCounter = "memory_bytes";
inline constexpr const char* kUtilizationCounter = "utilization";

Timeline make_timeline(const Program& program, const ClusterSpec& cluster,
                       const ExecutionTimes& times, const MemoryCurve& memory,
                       const std::string& source);

// The devices of a Program's timeline, each named with its place in the grid.
std::vector<TimelineDevice> timeline_devices(const Program& program, const ClusterSpec& cluster);

// Appends `part` (one Program's timeline) to `into`, `shift_s` later and `iteration_shift`
// iterations on; the flows of part number `part_index` stay apart from the others'. Link
// counters are left out: link ids differ between Programs.
void append_timeline(Timeline& into, const Timeline& part, double shift_s, int32_t iteration_shift,
                     uint64_t part_index);

// Adds each used link (id = its position in `links`) and its utilisation counter.
void add_link_counters(Timeline& timeline, const std::vector<LinkUsage>& links);

}  // namespace pipetwin
