#include "sim/driver/engine.h"

#include "sim/exec/analytic_executor.h"
#include "sim/scenario/did_you_mean.h"
#include "sim/simgrid/simgrid_executor.h"
#include "sim/spec/errors.h"

namespace pipetwin {

Engine parse_engine(const std::string& name) {
  if (name == "analytic") return Engine::kAnalytic;
  if (name == "simgrid") return Engine::kSimgrid;
  std::string list;
  for (const std::string& known : available_engines()) list += (list.empty() ? "" : ", ") + known;
  throw InputError("--engine " + name + ": unknown engine (available: " + list + ")" +
                   did_you_mean(name, available_engines()));
}

const char* engine_name(Engine engine) {
  return engine == Engine::kSimgrid ? "simgrid" : "analytic";
}

std::vector<std::string> available_engines() { return {"analytic", "simgrid"}; }

ExecutionTimes execute(const Program& program, const ResolvedScenario& setup, Engine engine) {
  switch (engine) {
    case Engine::kSimgrid:
      return run_simgrid(program, setup.cluster, setup.simgrid);
    case Engine::kAnalytic:
      break;
  }
  return run_analytic(program, setup.cluster);
}

std::optional<Topology> accounting_topology(const Program& program, const ResolvedScenario& setup,
                                            Engine engine) {
  switch (engine) {
    case Engine::kSimgrid:
      if (!setup.cluster.simgrid_platform.empty()) return std::nullopt;
      return simgrid_topology(program, setup.cluster, setup.simgrid);
    case Engine::kAnalytic:
      break;
  }
  return Topology::shared(setup.cluster);
}

}  // namespace pipetwin
