// --max-instructions and --max-memory: the limits past which a scenario is refused before
// anything is built (sim/driver/resource_limits.h), on every command that builds Programs.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>

#include "sim/driver/resource_limits.h"

namespace pipetwin {

struct ResourceOptions {
  int64_t max_instructions = ResourceLimits().max_instructions;
  double max_memory_gib = ResourceLimits().max_memory_bytes / (1024.0 * 1024 * 1024);

  ResourceLimits limits() const {
    return {max_instructions, max_memory_gib * 1024.0 * 1024 * 1024};
  }
};

void add_resource_options(CLI::App* command, ResourceOptions* options);

}  // namespace pipetwin
