// Interference between compute and communication on one device (cluster.interference):
// a compute op runs at (1 - compute_slowdown) of its speed while a transfer of its device
// runs; a transfer at (1 - transfer_slowdown) of its speed while either of its devices
// computes. An op of base duration w overlapped for o seconds thus takes w + slowdown * o.
// The overlap depends on the times, which depend on the delays, so the delays are the
// fixed point of that rule on the analytic walk. Both engines then add the same delays
// (Instruction::interference_s).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/exec/execution_times.h"
#include "sim/program/program.h"
#include "sim/spec/cluster_spec.h"

namespace pipetwin {

// What an op does to a device while it runs, for the interference rule.
enum class Activity : uint8_t { kCompute, kCommunication, kNeither };
Activity activity_of(Op op);

// The union of each device's busy intervals of one kind of activity, and how much of an
// interval it covers.
class BusyIntervals {
 public:
  explicit BusyIntervals(int32_t devices) : intervals_(devices) {}
  void add(int32_t device, double start, double end);
  void finish();  // merges each device's intervals; call once before overlap()
  // Seconds of [start, end) during which `device` was busy.
  double overlap(int32_t device, double start, double end) const;

 private:
  std::vector<std::vector<std::pair<double, double>>> intervals_;
};

// For every instruction of `program` run at `times`: how long it overlapped the other
// kind of activity (compute ops: communication of their device; transfers: compute of
// the busier of their two devices; collectives: compute of their device).
std::vector<double> interference_overlap(const Program& program, const ExecutionTimes& times);

struct InterferenceFixedPoint {
  int32_t rounds = 0;
  double last_change_s = 0;  // largest change of any delay in the last round
};

// Sets every instruction's interference_s to the fixed point of the rule (iterating the
// analytic walk, at most `max_rounds` times). Without interference it does nothing: a
// Program is built with every interference_s 0.
InterferenceFixedPoint apply_interference(Program& program, const ClusterSpec& cluster,
                                          int32_t max_rounds = 60);

}  // namespace pipetwin
