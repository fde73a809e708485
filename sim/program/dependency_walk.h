// Visits a Program's instructions in an order that respects lane order, data
// dependencies and rendezvous pairs: the max-plus recurrence of docs/schedules.md.
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
// once per pair with i the SEND and j its RECV, otherwise j is -1 (for a collective, once
// per group, with i one of its members). Every instruction starts when its lane
// predecessor and dependencies have ended; a pair or a collective starts when all its
// members are ready, and they share one start and end.
//
// Host-side dispatch: an instruction starts no earlier than `issue_s` after its lane
// predecessor ended (the host issuing it), nor earlier than `wakeup_s` after a dependency
// on another lane ended (a thread waking up, an event wait). Both 0 by default.
//
// A collective with a lead (Instruction::lead_s) may start that long before the compute op
// of its device that it waits for ends, but not before that op starts.
template <class Duration>
WalkResult walk_in_dependency_order(const Program& p, Duration&& duration,
                                    std::vector<double>& start, std::vector<double>& end,
                                    double issue_s = 0, double wakeup_s = 0) {
  // Lanes are swept in order, each as far as its dependencies allow, so instructions
  // are read sequentially; a lane that stalls is resumed when what it waits for ends.
  const int32_t n = p.size();
  const int32_t lanes = p.num_devices * kLaneCount;
  start.assign(n, 0.0);
  end.assign(n, 0.0);
  // What the walk needs of each instruction, packed into 16 bytes: the walk is bound
  // by memory access, not arithmetic.
  struct Node {
    double ready;       // when the data dependencies are met (or, waiting, the lane was)
    int32_t remaining;  // data dependencies not yet ended; -1: a transfer waiting
    int32_t lane;
  };
  std::vector<Node> node(n);
  for (int32_t l = 0; l < lanes; ++l) {
    for (int32_t i = p.lane_begin[l]; i < p.lane_begin[l + 1]; ++i) {
      node[i] = {0.0, p.dep_begin[i + 1] - p.dep_begin[i], l};
    }
  }
  std::vector<int32_t> head(p.lane_begin.begin(), p.lane_begin.end() - 1);
  std::vector<double> lane_free(lanes, 0.0);  // when the lane's last instruction ended
  std::vector<char> queued(lanes, 1);
  std::vector<int32_t> arrivals(p.num_groups(), 0);  // collective members ready so far
  std::vector<int32_t> worklist(lanes);
  for (int32_t l = 0; l < lanes; ++l) worklist[l] = lanes - 1 - l;

  WalkResult result;
  auto wake = [&](int32_t lane) {
    if (!queued[lane]) {
      queued[lane] = 1;
      worklist.push_back(lane);
    }
  };
  auto finish = [&](int32_t i, int32_t lane, double s, double e) {
    start[i] = s;
    end[i] = e;
    ++result.executed;
    ++head[lane];
    lane_free[lane] = e;
    // A compute op's dependents on its device's collective lanes may start early.
    const bool compute = lane % kLaneCount == static_cast<int>(Lane::kCompute);
    const int32_t collective_lane =
        lane - static_cast<int>(Lane::kCompute) + static_cast<int>(Lane::kCollective);
    const int32_t data_parallel_lane =
        lane - static_cast<int>(Lane::kCompute) + static_cast<int>(Lane::kDataParallel);
    for (int32_t d : p.dependents_of(i)) {
      Node& next = node[d];
      double ready = next.lane == lane ? e : e + wakeup_s;
      if (compute && (next.lane == collective_lane || next.lane == data_parallel_lane)) {
        ready -= std::min(p.instructions[d].lead_s, e - s);
      }
      if (ready > next.ready) next.ready = ready;
      if (--next.remaining == 0) wake(next.lane);
    }
  };

  while (!worklist.empty()) {
    const int32_t lane = worklist.back();
    worklist.pop_back();
    queued[lane] = 0;
    const int32_t lane_end = p.lane_begin[lane + 1];
    while (head[lane] < lane_end) {
      const int32_t i = head[lane];
      if (node[i].remaining != 0) break;  // woken again when the last dependency ends
      const double t =
          std::max(node[i].ready, i == p.lane_begin[lane] ? 0.0 : lane_free[lane] + issue_s);
      // Only send/recv lanes hold transfers and only collective lanes hold collectives,
      // so the compute lane, most of the work, never reads the pairing tables.
      const int kind = lane % kLaneCount;
      const bool transfer_lane =
          kind == static_cast<int>(Lane::kSend) || kind == static_cast<int>(Lane::kRecv);
      const int32_t group = is_collective_lane(kind) ? p.group[i] : -1;
      const int32_t partner = transfer_lane ? p.partner[i] : -1;
      if (group >= 0) {
        node[i] = {t, -1, lane};
        const auto members = p.members_of_group(group);
        if (++arrivals[group] < static_cast<int32_t>(members.size())) break;
        double s = t;  // the last member to arrive fires the collective
        for (int32_t m : members) s = std::max(s, node[m].ready);
        const double e = s + duration(i, -1);
        for (int32_t m : members) {
          finish(m, node[m].lane, s, e);
          if (m != i) wake(node[m].lane);
        }
        continue;
      }
      if (partner < 0) {
        finish(i, lane, t, t + duration(i, -1));
        continue;
      }
      if (node[partner].remaining >= 0) {  // the partner's lane fires the pair later
        node[i] = {t, -1, lane};
        break;
      }
      const bool i_sends = kind == static_cast<int>(Lane::kSend);
      const int32_t send = i_sends ? i : partner;
      const int32_t recv = i_sends ? partner : i;
      const double s = std::max(t, node[partner].ready);
      const double e = s + duration(send, recv);
      const int32_t partner_lane = node[partner].lane;
      finish(i, lane, s, e);
      finish(partner, partner_lane, s, e);
      wake(partner_lane);
    }
  }

  if (result.executed < n) {
    for (int32_t l = 0; l < lanes && result.blocked < 0; ++l) {
      const int32_t i = head[l];
      if (i < p.lane_begin[l + 1] && node[i].remaining < 0 && p.partner[i] >= 0 &&
          node[p.partner[i]].remaining >= 0) {
        result.blocked = i;
      }
    }
    for (int32_t l = 0; l < lanes && result.blocked < 0; ++l) {
      if (head[l] < p.lane_begin[l + 1]) result.blocked = head[l];
    }
  }
  return result;
}

}  // namespace pipetwin
