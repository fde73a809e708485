#include "app/tune_run.h"

#include <algorithm>
#include <chrono>
#include <sstream>

#include "sim/driver/resource_limits.h"
#include "sim/scenario/scenario_writer.h"
#include "sim/spec/errors.h"
#include "sim/sweep/fork_pool.h"

namespace pipetwin {

TuneRun run_tune(const LoadedScenario& loaded, const TuneRunOptions& options) {
  if (options.simgrid < 0) throw InputError("--simgrid: must be 0 or more");
  const auto start = std::chrono::steady_clock::now();
  TuneRun run;
  run.scenario = loaded.scenario.name();
  run.result = tune(loaded, options.search);
  // The engine's best that SimGrid can hold (its actors cost more than the analytic engine's
  // state), in order.
  std::vector<TuneConfig> chosen;
  double largest_bytes = 0;  // the estimate of the largest of their runs
  for (const TunePoint& p : run.result.refined) {
    if (chosen.size() == static_cast<size_t>(options.simgrid)) break;
    std::string reason;
    const std::optional<ResolvedScenario> setup = apply_config(loaded, p.config, reason);
    if (setup && fits_engine(*setup, Evaluator::kSimgrid, options.search.limits)) {
      chosen.push_back(p.config);
      largest_bytes = std::max(
          largest_bytes, estimate_program_size(*setup, {Engine::kSimgrid, false}).memory_bytes);
    }
  }
  // As many at once as the memory limit holds: each fits alone, two of the largest may not.
  const int at_once =
      largest_bytes > 0
          ? std::max(1, std::min(available_cpus(),
                                 static_cast<int>(options.search.limits.max_memory_bytes /
                                                  largest_bytes)))
          : available_cpus();
  run.simgrid.resize(chosen.size());
  run_in_children(
      chosen.size(), at_once,
      [&](size_t i) {
        std::string reason;
        const std::optional<ResolvedScenario> setup = apply_config(loaded, chosen[i], reason);
        const TunePoint p =
            simulate_config(*setup, chosen[i], Evaluator::kSimgrid, options.search.limits);
        std::ostringstream out;
        out.precision(17);
        out << p.iteration_time_s << ' ' << p.throughput_samples_per_s << ' '
            << p.peak_memory_bytes;
        return out.str();
      },
      [&](size_t i, ChildExit exit) {
        if (!exit.exited_cleanly()) {
          throw RuntimeFailure("tune: SimGrid on " + config_name(chosen[i]) + " " +
                               describe_child_exit(exit.wait_status));
        }
        TunePoint& p = run.simgrid[i];
        p.config = chosen[i];
        p.evaluator = Evaluator::kSimgrid;
        std::istringstream in(exit.output);
        in >> p.iteration_time_s >> p.throughput_samples_per_s >> p.peak_memory_bytes;
      });
  run.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return run;
}

void write_best_scenario(const LoadedScenario& loaded, const TuneRun& run,
                         const std::string& output) {
  if (!run.result.best) {
    throw RuntimeFailure("tune: no configuration fits the memory limit; nothing to write");
  }
  const TuneConfig& best = run.result.best->config;
  const proto::Scenario scenario = with_config(loaded.scenario, best);
  std::ostringstream header;
  header << "# The configuration `pipetwin tune` found for " << run.scenario << ":\n"
         << "# " << config_name(best) << "\n"
         << "# analytic engine: " << run.result.best->iteration_time_s << " s per iteration, "
         << run.result.best->peak_memory_bytes << " bytes of peak GPU memory\n";
  write_scenario(scenario, loaded, header.str(), output, "the best configuration");
}

}  // namespace pipetwin
