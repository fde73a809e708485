// Device memory over time, from a Program and when its instructions ran. Shared by
// every executor, so that simulated and measured runs account memory the same way:
// * resident bytes (weights, gradients, optimizer state) from time 0;
// * each FWD's stash from its start until the end of the BWD of those samples (PipeFB:
//   on the forward device until its SEND_STASH ends, then as the backward device's
//   receive buffer);
// * receive buffers: a RECV's payload from its start until the compute op that consumes
//   it has finished (after that it is part of the stash, or gone);
// * offload: an OFFLOAD frees its bytes on the device when its copy ends and holds them in
//   host memory from its start; a RELOAD allocates them on the device when it starts and
//   frees the host copy when it ends.
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

// (time, bytes in use from that time on), one sample per change.
using MemorySamples = std::vector<std::pair<double, int64_t>>;

struct MemoryCurve {
  std::vector<MemorySamples> samples;  // per device
  std::vector<MemoryPeak> peaks;
  // Host memory holding each device's offloaded activations (all zero without offload).
  std::vector<MemorySamples> host_samples;
  std::vector<MemoryPeak> host_peaks;
};

// At equal times frees come before allocations: a BWD that ends when the next FWD
// starts hands its memory over, as a caching allocator does.
MemoryCurve memory_curve(const Program& program, const ExecutionTimes& times);

// The peak of the sum of several devices' curves (e.g. the host memory of one node).
MemoryPeak combined_peak(const std::vector<const MemorySamples*>& curves);

}  // namespace pipetwin
