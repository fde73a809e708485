// The SimGrid configuration every pipetwin simulation starts from.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/spec/resolved_scenario.h"

namespace pipetwin {

// Each lane actor's stack: 4x what the whole test suite needs (it passes with 16 KiB and
// guard pages, which catch an overflow).
inline constexpr int kSimgridActorStackKib = 64;
// Each actor's stack is a mapping, split in two by its guard page; Linux allows a process
// 65,536 mappings by default, which 8192 GPUs' 32,768 lane actors would pass. Runs with more
// actors than this go without guard pages, and SimGrid then allocates (and zeroes) each
// stack in full: all of it is resident.
inline constexpr int64_t kSimgridGuardedActors = 16'000;

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
