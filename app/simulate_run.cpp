#include "app/simulate_run.h"

#include "app/async_summary.h"
#include "app/freeze_summary.h"
#include "app/run_summary.h"
#include "sim/chakra/chakra_import.h"
#include "sim/chakra/chakra_stream.h"
#include "sim/scenario/resolve_scenario.h"
#include "sim/spec/errors.h"
#include "sim/driver/steady_state.h"

namespace pipetwin {
namespace {

void extrapolate(SimulateRun& run, SteadyStateRuns runs) {
  const ResolvedScenario& setup = run.setup;
  const int64_t iterations = setup.training.iterations;
  const int64_t batch = setup.training.global_batch;
  const int32_t n = runs.shorter.setup.training.iterations;
  Extrapolation e;
  e.simulated_iterations = n + 1;
  run.metrics =
      extrapolate_metrics(compute_metrics(runs.shorter, n, batch),
                          compute_metrics(runs.longer, n + 1, batch), n + 1, iterations, batch);
  const int64_t per_iteration = runs.longer.program.size() - runs.shorter.program.size();
  e.instructions = runs.longer.program.size() + (iterations - n - 1) * per_iteration;
  SimulationResult result = std::move(runs.longer);
  const double extra = static_cast<double>(iterations - n - 1);
  for (size_t l = 0; l < result.links.size() && l < runs.shorter.links.size(); ++l) {
    LinkUsage& link = result.links[l];
    const LinkUsage& before = runs.shorter.links[l];
    link.bytes += extra * (link.bytes - before.bytes);
    link.busy_s += extra * (link.busy_s - before.busy_s);
  }
  result.setup.training.iterations = setup.training.iterations;
  run.result = std::move(result);
  run.extrapolation = e;
}

// The steady-state extrapolation when the whole run is past the limits and one applies.
bool try_extrapolation(SimulateRun& run, const SimulationOptions& options) {
  if (within_limits(estimate_program_size(run.setup, {options.engine, options.timeline}),
                    options.limits)) {
    return false;
  }
  if (!can_extrapolate(run.setup, options)) return false;  // the limit's error follows
  std::optional<SteadyStateRuns> runs = find_steady_state(run.setup, options);
  if (!runs) return false;
  extrapolate(run, std::move(*runs));
  return true;
}

}  // namespace

const Timeline& SimulateRun::timeline() const {
  return training ? training->overview : result->timeline;
}

nlohmann::json SimulateRun::json() const {
  if (training) {
    // A whole training run with FreezePipe: training_time_s, freeze_events and phases
    // next to the first phase's report.
    const int32_t iterations = setup.training.iterations;
    const SimulationResult& first = training->first_phase;
    nlohmann::json j =
        run_summary_json(first, compute_metrics(first, 1, setup.training.global_batch));
    j["training_time_s"] = training->training_time_s;
    j["iteration_time_s"] = training->training_time_s / iterations;
    j["throughput_samples_per_s"] =
        static_cast<double>(setup.training.global_batch) * iterations / training->training_time_s;
    j.update(freeze_run_json(training->phases, training->migrations));
    if (setup.freeze.cache_epoch_iterations > 0) j["autocache"] = autocache_json(setup, *training);
    return j;
  }
  nlohmann::json j = run_summary_json(*result, metrics);
  if (!from_chakra) j.update(pipeline_versions_json(*result));
  if (extrapolation) {
    j["instructions"] = extrapolation->instructions;
    j["steady_state"] = {{"simulated_iterations", extrapolation->simulated_iterations},
                         {"extrapolated", true}};
  }
  return j;
}

SimulateRun run_simulation(const LoadedScenario& loaded, const SimulationOptions& options) {
  SimulateRun run;
  run.setup = resolve_scenario(loaded);
  const ResolvedScenario& setup = run.setup;
  if (setup.freeze.enabled && setup.freeze.measured()) {
    throw InputError(loaded.where("freeze") +
                     ": no source of freezing to simulate: give at, log or synthetic (without "
                     "one, the rule runs on the gradients pipetwin run measures)");
  }
  if (setup.freeze.enabled) {
    // Its phases' timelines make the training run's overview and times.
    SimulationOptions with_timelines = options;
    with_timelines.timeline = true;
    run.training = simulate_training(setup, with_timelines);
    return run;
  }
  if (try_extrapolation(run, options)) return run;
  run.result = simulate_setup(setup, options);
  run.metrics = compute_metrics(*run.result, run.result->setup.training.iterations,
                                run.result->setup.training.global_batch);
  return run;
}

SimulateRun run_chakra_simulation(const std::string& dir, const std::string& scenario,
                                  const std::vector<std::string>& overrides,
                                  const SimulationOptions& options) {
  ChakraProgram chakra = program_from_chakra(read_chakra_dir(dir));
  std::vector<std::string> assignments = overrides;
  std::string source = scenario;
  if (scenario.empty() && !chakra.scenario_source.empty()) {
    source = chakra.scenario_source;
    assignments = chakra.overrides;
    assignments.insert(assignments.end(), overrides.begin(), overrides.end());
  }
  SimulateRun run;
  run.setup = resolve_scenario(load_scenario(source, assignments));
  run.from_chakra = true;
  const Program& program = chakra.program;
  const auto devices = static_cast<int32_t>(run.setup.cluster.devices.size());
  if (devices < program.num_devices) {
    throw InputError(dir + ": the traces have " + std::to_string(program.num_devices) +
                     " ranks, the cluster of " + (source.empty() ? "the quickstart" : source) +
                     " only " + std::to_string(devices) +
                     " devices: give a scenario whose cluster has enough");
  }
  run.setup.training.iterations = program.iterations;
  run.setup.training.global_batch = program.global_batch;
  run.result = simulate_program(run.setup, std::move(chakra.program), options);
  run.metrics = compute_metrics(*run.result, run.result->setup.training.iterations,
                                run.result->setup.training.global_batch);
  return run;
}

}  // namespace pipetwin
