// `export chakra`, computed once: the command line writes it, and so does the Python module
// (pipetwin.export_chakra).
#pragma once

#include <string>
#include <vector>

#include "sim/chakra/chakra_export.h"
#include "sim/driver/resource_limits.h"

namespace pipetwin {

struct ChakraExportRun {
  std::string scenario_name;
  int32_t instructions = 0;
  ChakraWorkload workload;
};

// The scenario's Program (with interference, as simulate runs it) as one Chakra trace per
// rank, recording `scenario` and `overrides` so that `simulate --chakra` finds its cluster.
// Throws InputError for bad input and for a FreezePipe scenario, whose program changes at
// every freeze.
ChakraExportRun export_chakra(const std::string& scenario,
                              const std::vector<std::string>& overrides,
                              const ResourceLimits& limits);

}  // namespace pipetwin
