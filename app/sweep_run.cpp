#include "app/sweep_run.h"

#include <algorithm>
#include <iostream>

#include "analysis/metrics.h"
#include "sim/scenario/resolve_scenario.h"
#include "sim/driver/simulate.h"
#include "sim/spec/errors.h"
#include "sim/sweep/fork_pool.h"
#include "sim/sweep/point_result.h"
#include "sim/sweep/progress_bar.h"
#include "sim/sweep/sweep_grid.h"

namespace pipetwin {
namespace {

struct PreparedPoint {
  SweepPoint point;
  LoadedScenario loaded;
  int64_t index = 0;  // in grid order
};

// Loads and validates every point here, in the parent: bad input must stop the sweep
// before any point runs, with the point named.
std::vector<PreparedPoint> prepare_points(const SweepRequest& request,
                                          std::vector<std::string>& paths, int64_t& grid_points) {
  std::vector<VaryAxis> axes;
  for (const std::string& text : request.vary) axes.push_back(parse_vary(text));
  for (const VaryAxis& axis : axes) paths.push_back(axis.path);
  parse_engine(request.engine);  // a bad name stops the sweep before any point runs
  double points = 1;
  for (const VaryAxis& axis : axes) points *= static_cast<double>(axis.values.size());
  if (points > static_cast<double>(request.max_points)) {
    throw InputError("the grid has " + std::to_string(static_cast<long long>(points)) +
                     " points, more than --max-points " + std::to_string(request.max_points) +
                     ": vary fewer fields or fewer values, or raise --max-points");
  }
  std::vector<SweepPoint> grid = cartesian_product(axes, request.overrides);
  grid_points = static_cast<int64_t>(grid.size());
  std::vector<PreparedPoint> prepared;
  for (int64_t index = 0; index < grid_points; ++index) {
    if (!request.shard.holds(index)) continue;  // another shard's: it checks and runs it
    SweepPoint& point = grid[static_cast<size_t>(index)];
    try {
      LoadedScenario loaded =
          load_scenario(request.scenario, point_overrides(request.overrides, point));
      // A point's run keeps no timeline (its metrics come from the Program).
      check_resource_limits(resolve_scenario(loaded), request.limits,
                            {parse_engine(request.engine), false});
      prepared.push_back({std::move(point), std::move(loaded), index});
    } catch (const InputError& e) {
      throw InputError("point " + point_name(point) + ": " + e.what());
    }
  }
  return prepared;
}

// Runs in the child: everything it learns goes into the result, nothing escapes.
PointResult run_point(const LoadedScenario& loaded, const SweepRequest& request) {
  PointResult r;
  try {
    // A point reports metrics only: no timeline.
    const SimulationResult result =
        simulate(loaded, {parse_engine(request.engine), request.allow_oom, request.limits, false});
    const RunMetrics metrics = compute_metrics(result, result.setup.training.iterations,
                                               result.setup.training.global_batch);
    r.out_of_memory = !result.out_of_memory.empty();
    r.status = r.out_of_memory ? PointStatus::kOutOfMemory : PointStatus::kOk;
    r.iteration_time_s = metrics.iteration_time_s;
    r.throughput_samples_per_s = metrics.throughput_samples_per_s;
    r.bubble_ratio = metrics.bubble_ratio;
    for (const DeviceMetrics& d : metrics.devices) {
      r.peak_memory_bytes = std::max(r.peak_memory_bytes, d.peak_memory_bytes);
    }
  } catch (const InputError& e) {
    r = PointResult{.status = PointStatus::kInputError, .error = e.what()};
  } catch (const std::exception& e) {  // RuntimeFailure (out of memory), or a bug
    r = PointResult{.status = PointStatus::kRuntimeError, .error = e.what()};
  }
  return r;
}

// What the parent makes of a finished child: its result, or why there is none.
PointResult collect(const ChildExit& exit) {
  if (exit.exited_cleanly()) {
    if (auto result = decode_point_result(exit.output)) return *result;
    return PointResult{.status = PointStatus::kCrashed,
                       .error = "the point's process sent an unreadable result"};
  }
  return PointResult{.status = PointStatus::kCrashed,
                     .error = "the point's process " + describe_child_exit(exit.wait_status) +
                              " before sending a result"};
}

}  // namespace

SweepOutcome run_sweep_grid(const SweepRequest& request) {
  if (request.vary.empty()) {
    throw InputError("--vary is required: the fields to vary, PATH=V1,V2,...");
  }
  SweepOutcome outcome;
  int64_t grid_points = 0;
  std::vector<PreparedPoint> prepared = prepare_points(request, outcome.paths, grid_points);

  std::vector<SweepRow>& rows = outcome.rows;
  rows.resize(prepared.size());
  ProgressBar progress(std::cerr, prepared.size(),
                       request.progress && ProgressBar::stderr_is_terminal());
  size_t done = 0;
  progress.update(done);
  run_in_children(
      prepared.size(), request.jobs > 0 ? request.jobs : available_cpus(),
      [&](size_t i) { return encode_point_result(run_point(prepared[i].loaded, request)); },
      [&](size_t i, ChildExit exit) {
        rows[i] = {prepared[i].point, collect(exit), prepared[i].index, grid_points};
        progress.update(++done);
      });
  progress.clear();
  sort_by_iteration_time(rows);
  outcome.failed = std::count_if(rows.begin(), rows.end(),
                                 [](const SweepRow& row) { return row.result.failed(); });
  return outcome;
}

}  // namespace pipetwin
