// The seam between a Program and the engines that execute it. An engine is chosen once,
// by name, where the user names it (--engine); everything below passes the enum.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/cluster/topology.h"
#include "sim/exec/execution_times.h"
#include "sim/program/program.h"
#include "sim/spec/resolved_scenario.h"

namespace pipetwin {

enum class Engine {
  kAnalytic,  // event-driven walk of the dependency graph (sim/exec)
  kSimgrid,   // SimGrid's flow-level network model (sim/simgrid)
};

// Throws InputError naming the known engines for an unknown name.
Engine parse_engine(const std::string& name);
const char* engine_name(Engine engine);
std::vector<std::string> available_engines();

// The start and end of every instruction of `program` on `setup`'s cluster.
ExecutionTimes execute(const Program& program, const ResolvedScenario& setup, Engine engine);

// The links the engine's traffic is accounted on: the cluster's fabric for the analytic
// engine (it has no topology of its own, so that the two can be compared link by link),
// SimGrid's own platform otherwise; none for a user's SimGrid XML platform, whose links
// pipetwin does not know.
std::optional<Topology> accounting_topology(const Program& program, const ResolvedScenario& setup,
                                            Engine engine);

}  // namespace pipetwin
