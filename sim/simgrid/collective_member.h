// One member's part of a collective's lock-step flows (sim/network/collective_schedule.h)
// on a SimGrid platform. Every member of the group runs this with the group's barrier.
//
// Step by step, the member sends its flows of each step and all members meet at the
// barrier before the next. Aggregated (the default), the member sends each flow of a phase
// once with all of the phase's steps' bytes, then waits out the latencies of the steps that
// one flow does not pay: the same bytes on the same links, with one activity per flow and
// phase instead of one per flow and step. Without contention both give the closed form
// exactly; under contention tests/sim/simgrid/ring_collective_test.cpp holds them within 1%.
//
// A flow goes through the receiver's mailbox (a put and a get), not host to host: SimGrid 3.32
// files every host-to-host communication in one list of the maestro's and unfiles it by a
// linear walk when it ends, so that each flow's end walked every flow in flight in the
// cluster (docs/performance.md); a mailbox communication is filed under its two actors.
#pragma once

#include <cstdint>
#include <simgrid/s4u.hpp>
#include <string>
#include <vector>

#include "sim/network/collective_schedule.h"

namespace pipetwin {

// One mailbox per endpoint (an index into the hosts) for one kind of collective lane, where
// that endpoint receives its flows. A lane runs one collective at a time and every member
// waits for all of a phase's flows before the barrier that ends the phase, so a mailbox
// never holds flows of two phases.
class CollectiveInboxes {
 public:
  CollectiveInboxes(std::string prefix, size_t endpoints)
      : prefix_(std::move(prefix)), boxes_(endpoints, nullptr) {}
  simgrid::s4u::Mailbox* at(int32_t endpoint);

 private:
  std::string prefix_;
  std::vector<simgrid::s4u::Mailbox*> boxes_;  // created when first used
};

// `device`'s part, run by an actor on hosts[device].
void run_collective_member(const CollectiveSchedule& schedule, int32_t device,
                           const std::vector<simgrid::s4u::Host*>& hosts,
                           CollectiveInboxes& inboxes, simgrid::s4u::Barrier& barrier,
                           bool step_by_step);

// Sender -> receiver pairs of every flow of `schedule`, appended to `pairs`.
void append_flow_pairs(const CollectiveSchedule& schedule,
                       std::vector<std::pair<int32_t, int32_t>>& pairs);

}  // namespace pipetwin
