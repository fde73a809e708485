// The fast evaluator against the analytic engine on every shipped scenario it models.
#include "sim/tune/fast_estimate.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "shipped_scenarios.h"
#include "sim/scenario/loaded_scenario.h"
#include "sim/scenario/resolve_scenario.h"
#include "sim/simulate.h"

namespace pipetwin {
namespace {

TEST(FastEstimate, DevPrint) {
  for (const std::string& name : testing::shipped_scenario_names()) {
    if (testing::benchmark_sized(name)) continue;
    const LoadedScenario loaded = load_scenario(
        (std::filesystem::path(PIPETWIN_SOURCE_DIR) / "scenarios" / (name + ".textproto")).string(),
        {});
    ResolvedScenario setup = resolve_scenario(loaded);
    setup.training.iterations = 1;
    if (!has_fast_estimate(setup)) continue;
    const auto fast = estimate_fast(setup);
    SimulationOptions options;
    options.timeline = false;
    options.allow_oom = true;
    const SimulationResult r = simulate_setup(setup, options);
    double makespan = 0;
    for (double e : r.times.end_s) makespan = std::max(makespan, e);
    int64_t peak = 0;
    for (const auto& p : r.memory.peaks) peak = std::max(peak, p.bytes);
    std::printf("%-40s time %10.5f %10.5f (%+6.2f%%)  mem %8.3f %8.3f GB (%+6.2f%%)\n",
                name.c_str(), fast->iteration_time_s, makespan,
                100 * (fast->iteration_time_s / makespan - 1), fast->peak_memory_bytes / 1e9,
                peak / 1e9, 100 * (static_cast<double>(fast->peak_memory_bytes) / peak - 1));
  }
}

}  // namespace
}  // namespace pipetwin
