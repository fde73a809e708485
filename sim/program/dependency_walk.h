// Visits a Program's instructions in an order that respects lane order, data
// dependencies and rendezvous pairs: the max-plus recurrence of DESIGN.md section 4.
// The analytic executor is this walk with real durations; validation runs it with zero
// durations to prove the program cannot deadlock.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "sim/program/program.h"

namespace pipetwin {

struct WalkResult {
  int32_t executed = 0;
  // When executed < size: an instruction that can never run (a transfer whose partner
  // is never reached, or one waiting on such a transfer).
  int32_t blocked = -1;
};

// `duration(i, j)` returns the seconds instruction i takes; for a transfer it is called
// once per pair with i the SEND and j its RECV, otherwise j is -1. Every instruction
// starts when its lane predecessor and dependencies have ended; a pair starts when both
// ends are ready, and both ends share one start and end.
template <class Duration>
WalkResult walk_in_dependency_order(const Program& p, Duration&& duration,
                                    std::vector<double>& start, std::vector<double>& end) {
  const int32_t n = p.size();
  start.assign(n, 0.0);
  end.assign(n, 0.0);
  std::vector<double> ready(n, 0.0);
  std::vector<int32_t> remaining(n);
  std::vector<char> waiting_for_partner(n, 0);
  std::vector<int32_t> stack;
  stack.reserve(p.num_devices * kLaneCount);
  for (int32_t i = 0; i < n; ++i) {
    remaining[i] = (p.has_lane_predecessor(i) ? 1 : 0) + (p.dep_begin[i + 1] - p.dep_begin[i]);
    if (remaining[i] == 0) stack.push_back(i);
  }

  WalkResult result;
  auto release = [&](int32_t next, double t) {
    ready[next] = std::max(ready[next], t);
    if (--remaining[next] == 0) stack.push_back(next);
  };
  auto finish = [&](int32_t i, double s, double e) {
    start[i] = s;
    end[i] = e;
    ++result.executed;
    const int32_t next = p.lane_next(i);
    if (next >= 0) release(next, e);
    for (int32_t d : p.dependents_of(i)) release(d, e);
  };

  while (!stack.empty()) {
    const int32_t i = stack.back();
    stack.pop_back();
    const int32_t partner = p.partner[i];
    if (partner < 0) {
      finish(i, ready[i], ready[i] + duration(i, -1));
    } else if (!waiting_for_partner[partner]) {
      waiting_for_partner[i] = 1;
    } else {
      const int32_t send = is_send(p.instructions[i].op) ? i : partner;
      const int32_t recv = send == i ? partner : i;
      const double s = std::max(ready[i], ready[partner]);
      const double e = s + duration(send, recv);
      finish(i, s, e);
      finish(partner, s, e);
    }
  }

  if (result.executed < n) {
    for (int32_t i = 0; i < n && result.blocked < 0; ++i) {
      if (waiting_for_partner[i] && !waiting_for_partner[p.partner[i]]) result.blocked = i;
    }
    for (int32_t i = 0; i < n && result.blocked < 0; ++i) {
      if (remaining[i] > 0) result.blocked = i;
    }
  }
  return result;
}

}  // namespace pipetwin
