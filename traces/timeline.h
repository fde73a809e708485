// The Timeline: what every device lane did, with real or simulated timestamps.
// Executors produce it; traces/ writes and reads it; analysis/ computes metrics from it.
// It knows nothing about schedulers or executors, so every producer can fill it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace pipetwin {

struct TimelineDevice {
  int32_t id = 0;
  int32_t node = 0;
  std::string name;  // e.g. "gpu3"
};

// One instruction's execution on one lane.
struct Span {
  int32_t device = 0;
  std::string lane;  // "compute", "send", "recv", "copy", "collective", "data-parallel"
  std::string name;  // text form of the instruction: "2F0", "1SEND_A3", "2F[0,48)"
  std::string op;    // "FWD", "BWD", "SEND_ACT", "RECV_ACT", "SEND_GRAD", "RECV_GRAD", "OPTIM"
  int32_t stage = -1;
  int32_t microbatch = -1;
  int32_t range_lo = 0;  // sample range [range_lo, range_hi) of the minibatch
  int32_t range_hi = 0;
  int32_t iteration = 0;
  double start_s = 0;
  double end_s = 0;
  int64_t bytes = 0;         // transfers only
  int32_t peer_device = -1;  // transfers only
  uint64_t flow_id = 0;      // 0 = none; a SEND and its matching RECV share one id

  int32_t samples() const { return range_hi - range_lo; }
  double duration_s() const { return end_s - start_s; }
};

// A network link of the simulated (or measured) cluster, for link counters.
struct TimelineLink {
  int32_t id = 0;
  std::string name;  // "nic0_1", "nvswitch_port3", "pcie_switch0"
  double bandwidth_bytes_per_s = 0;
};

// A sampled value that holds until the next sample of the same (device or link, name).
struct Counter {
  int32_t device = 0;
  std::string name;  // "memory_bytes" on a device; "utilization" on a link
  double time_s = 0;
  double value = 0;
  int32_t link = -1;  // >= 0: a link counter (TimelineLink::id); `device` is then unused
};

struct Instant {
  int32_t device = 0;
  std::string name;
  double time_s = 0;
};

struct Timeline {
  std::string source;  // "analytic", "simgrid", "torch", ...
  std::vector<TimelineDevice> devices;
  std::vector<TimelineLink> links;
  std::vector<Span> spans;
  std::vector<Counter> counters;
  std::vector<Instant> instants;
};

// When the earliest span starts; 0 for a timeline without spans.
inline double first_span_start(const Timeline& t) {
  double first = std::numeric_limits<double>::infinity();
  for (const Span& s : t.spans) first = std::min(first, s.start_s);
  return t.spans.empty() ? 0 : first;
}

}  // namespace pipetwin
