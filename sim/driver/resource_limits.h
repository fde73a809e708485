// Guards against scenarios too large for the machine: a typo with extra zeros
// (training.iterations: 100000000) must be an error in a second, not a machine that swaps.
// The Program's size is estimated from the scenario before anything is built.
#pragma once

#include <cstdint>
#include <string>

#include "sim/driver/engine.h"
#include "sim/spec/resolved_scenario.h"

namespace pipetwin {

// Half of the memory this machine had available when first asked (MemAvailable in
// /proc/meminfo), at least 1 GiB (4 GiB where /proc/meminfo cannot be read); and at most half
// of what the process's own limits (ulimit -v, ulimit -d, a cgroup's memory.max) leave it.
double default_memory_limit_bytes();

// Defaults that follow the machine; --max-instructions and --max-memory change them.
struct ResourceLimits {
  int64_t max_instructions = 50'000'000;
  double max_memory_bytes = default_memory_limit_bytes();
};

// What a run keeps besides its Program, which the memory estimate depends on: the engine's
// own state (SimGrid's hosts, links and lane actors' stacks) and the timeline, when one is
// asked for.
struct RunFootprint {
  Engine engine = Engine::kAnalytic;
  bool timeline = true;
};

struct ProgramSizeEstimate {
  double instructions = 0;  // a double: the product of huge fields must not overflow
  double memory_bytes = 0;  // the process at its peak: the Program, its times, the engine's
                            // state, the timeline when there is one
  std::string driver;       // the scenario field that contributes the largest factor
  double driver_value = 0;
};

// An upper bound close to the real count for every schedule (tests check it against built
// Programs). Cheap: no allocation proportional to the Program.
ProgramSizeEstimate estimate_program_size(const ResolvedScenario& setup,
                                          const RunFootprint& footprint = {});

bool within_limits(const ProgramSizeEstimate& size, const ResourceLimits& limits);

// Throws InputError with the estimate, the limit, the field that drives it and the flags that
// raise the limits, when the scenario is larger than `limits`.
void check_resource_limits(const ResolvedScenario& setup, const ResourceLimits& limits,
                           const RunFootprint& footprint = {});

}  // namespace pipetwin
