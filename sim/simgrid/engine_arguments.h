// The SimGrid configuration every pipetwin simulation starts from.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/spec/resolved_scenario.h"

namespace pipetwin {

// argv for simgrid::s4u::Engine: CM02 (max-min fair sharing) with no TCP window, no
// reverse-path cross-traffic, no RTT-unfair weight-S and unit latency and bandwidth
// factors, because GPU fabrics are not TCP; tight timing precision so that timestamps
// agree with the analytic executor to far better than 1e-9. settings.cfg comes last.
// `actors`: how many actors the run creates; past 16,000 their stacks go without guard pages.
std::vector<std::string> engine_arguments(const SimgridSettings& settings, int64_t actors = 0);

}  // namespace pipetwin

namespace simgrid::s4u {
class Engine;
}

namespace pipetwin {

// Creates this process's one SimGrid engine with engine_arguments(settings, actors). Call once,
// in a child process (run_in_child.h).
simgrid::s4u::Engine& start_engine(const SimgridSettings& settings, int64_t actors = 0);

}  // namespace pipetwin
