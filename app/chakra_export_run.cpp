#include "app/chakra_export_run.h"

#include "sim/driver/build_program.h"
#include "sim/exec/interference.h"
#include "sim/scenario/resolve_scenario.h"
#include "sim/spec/errors.h"

namespace pipetwin {

ChakraExportRun export_chakra(const std::string& scenario,
                              const std::vector<std::string>& overrides,
                              const ResourceLimits& limits) {
  const LoadedScenario loaded = load_scenario(scenario, overrides);
  const ResolvedScenario setup = resolve_scenario(loaded);
  if (setup.freeze.enabled) {
    throw InputError(loaded.where("freeze") +
                     ": a FreezePipe training run changes its program at every freeze, and the "
                     "traces hold one program: export the scenario without its freeze block");
  }
  check_resource_limits(setup, limits, {Engine::kAnalytic, false});
  Program program = build_program(setup);
  apply_interference(program, setup.cluster);
  return {setup.name, program.size(), chakra_workload(program, {setup.name, scenario, overrides})};
}

}  // namespace pipetwin
