// A collective as lock-step flows: phases run one after the other; a phase is `repeats`
// steps, and in each step every flow of the phase moves its bytes at once. The next step
// starts when the slowest flow of this one has arrived. The SimGrid engine runs exactly
// these flows, so contention between them and other traffic emerges; without contention
// the time is the closed form lock_step_seconds().
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sim/spec/cluster_spec.h"

namespace pipetwin {

struct PointFlow {
  int32_t from = 0;  // device
  int32_t to = 0;    // device
  int64_t bytes = 0;
};

struct FlowPhase {
  int32_t repeats = 1;
  std::vector<PointFlow> flows;
  // Time every step of the phase takes beyond its flows (NCCL's latency beyond the links',
  // nccl_collective.h), waited out after them.
  double overhead_s = 0;
};

using CollectiveSchedule = std::vector<FlowPhase>;

// Sum over phases of repeats x (the slowest flow of the phase (latency + bytes / bandwidth
// on the link ClusterSpec::link gives its two devices) + its overhead).
double lock_step_seconds(const ClusterSpec& cluster, const CollectiveSchedule& schedule);

inline int64_t ceil_div(int64_t bytes, int64_t parts) { return (bytes + parts - 1) / parts; }

// ceil(log2(ranks)): the rounds of a binomial tree over `ranks` members.
int32_t binomial_rounds(int32_t ranks);

// `repeats` steps in each of which every member of `ring` sends `chunk` bytes to the next
// (the last to the first). Empty for fewer than two members.
FlowPhase ring_phase(std::span<const int32_t> ring, int64_t chunk, int32_t repeats);

// Every phase `count` times as many steps: `count` collectives of the schedule's size one
// after the other, as lock-step time counts them.
void repeat_phases(CollectiveSchedule& schedule, int32_t count);

}  // namespace pipetwin
