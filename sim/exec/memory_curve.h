// Device memory over time, from a Program and when its instructions ran. Shared by
// every executor, so that simulated and measured runs account memory the same way:
// resident bytes (weights, gradients, optimizer state) from time 0, plus each FWD's
// stash from its start until its BWD's end.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "sim/exec/execution_times.h"
#include "sim/program/program.h"

namespace pipetwin {

struct MemoryPeak {
  int64_t bytes = 0;
  double time_s = 0;
  int32_t instruction = -1;  // the allocation that reached the peak; -1 = resident only
};

struct MemoryCurve {
  // Per device: (time, bytes in use from that time on), one sample per change.
  std::vector<std::vector<std::pair<double, int64_t>>> samples;
  std::vector<MemoryPeak> peaks;
};

// At equal times frees come before allocations: a BWD that ends when the next FWD
// starts hands its memory over, as a caching allocator does.
MemoryCurve memory_curve(const Program& program, const ExecutionTimes& times);

}  // namespace pipetwin
