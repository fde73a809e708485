// PipeDream profiler graph.txt files (scenarios/profiles/README.md): the input is the profile a
// scenario names in model.pipedream_profile, read the way `pipetwin simulate` reads it
// (read_scenario_relative_file, model_from_pipedream inside resolve_scenario), then simulated
// analytically, and planned by the PipeDream/APapo antichain DP (`pipetwin plan --search
// pipedream`).
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "sim/planner/pipedream_planner.h"
#include "sim/planner/planner_problem.h"

using namespace pipetwin;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::MemoryFile profile;
  profile.set(data, size);
  // vgg16-pipedream-4gpu.textproto with the fuzzed profile; the profile's size picks
  // whether input nodes cost time, and the profile batch.
  const std::string scenario =
      "name: \"fuzz\"\n"
      "cluster { preset: \"pcie-8xa100\" gpus_per_node: 4 }\n"
      "model { pipedream_profile: \"" +
      profile.path() + "\" profile_batch: " + std::to_string(1 + size % 128) +
      " profile_input_cost: " + (size % 2 ? "true" : "false") +
      " }\n"
      "training { global_batch: 64 microbatches: 4 optimizer: SGD }\n"
      "schedule { kind: ONE_F_ONE_B stages: 2 }\n";
  fuzz::expect_only_reported_errors([&] {
    const LoadedScenario loaded = parse_scenario(scenario, "fuzz.textproto", "", true, {});
    const ResolvedScenario setup = resolve_scenario(loaded);
    fuzz::expect_only_reported_errors([&] {
      PipedreamOptions options;
      options.chain_only = size % 3 == 0;
      (void)plan_pipedream(planner_problem(setup), options);
    });
    fuzz::simulate_within_limits(setup);
  });
  return 0;
}
