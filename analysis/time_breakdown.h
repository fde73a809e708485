// Where each device's time went, after Holistic Trace Analysis' temporal breakdown: every
// instant of the run (from the first span start to the last span end, as the makespan of
// analysis/metrics.h) falls in exactly one of five parts, so the parts sum to the makespan.
//
// - compute: the compute lane runs and no transfer of the device does;
// - overlapped communication: the compute lane runs and a transfer too (hidden by compute);
// - exposed communication: a transfer runs and the compute lane does not;
// - idle waiting on a peer: nothing runs, between the device's first and last compute span
//   of an iteration (it waits for a neighbour's activation or gradient);
// - idle in warm-up or drain: nothing runs, before the device's first compute span of an
//   iteration or after its last (the pipeline filling and emptying).
//
// Transfers are the spans of every lane but compute (send, recv, collective, copy).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "traces/timeline.h"

namespace pipetwin {

struct DeviceTimeBreakdown {
  int32_t device = 0;
  std::string name;
  double compute_s = 0;
  double overlapped_comm_s = 0;
  double exposed_comm_s = 0;
  double idle_peer_s = 0;
  double idle_warmup_drain_s = 0;

  double total_s() const {
    return compute_s + overlapped_comm_s + exposed_comm_s + idle_peer_s + idle_warmup_drain_s;
  }
  // The time the compute lane ran: compute_s + overlapped_comm_s.
  double busy_s() const { return compute_s + overlapped_comm_s; }
};

// One entry per device of the timeline, in its order.
std::vector<DeviceTimeBreakdown> time_breakdown(const Timeline& timeline);

}  // namespace pipetwin
