// One member's part of a collective's lock-step flows (sim/network/collective_schedule.h)
// on a SimGrid platform. Every member of the group runs this with the group's barrier.
//
// Step by step, the member sends its flows of each step and all members meet at the
// barrier before the next. Aggregated (the default), the member sends each flow of a phase
// once with all of the phase's steps' bytes, then waits out the latencies of the steps that
// one flow does not pay: the same bytes on the same links, with one activity per flow and
// phase instead of one per flow and step. Without contention both give the closed form
// exactly; under contention tests/sim/simgrid/ring_collective_test.cpp holds them within 1%.
#pragma once

#include <cstdint>
#include <simgrid/s4u.hpp>
#include <vector>

#include "sim/network/collective_schedule.h"

namespace pipetwin {

void run_collective_member(const CollectiveSchedule& schedule, int32_t device,
                           const std::vector<simgrid::s4u::Host*>& hosts,
                           simgrid::s4u::Barrier& barrier, bool step_by_step);

// Sender -> receiver pairs of every flow of `schedule`, appended to `pairs`.
void append_flow_pairs(const CollectiveSchedule& schedule,
                       std::vector<std::pair<int32_t, int32_t>>& pairs);

}  // namespace pipetwin
