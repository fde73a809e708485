#include "app/goodput_run.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "app/simulate_run.h"
#include "report/text_units.h"
#include "sim/model/training_memory.h"
#include "sim/scenario/resolve_run.h"
#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

constexpr double kSecondsPerDay = 86400;

// Every shard written once and spread over the job's nodes (a fully parallel save): each node
// writes its share at its own bandwidth unless the storage's aggregate is the tighter bound;
// loading reads the same way. The snapshot of an asynchronous checkpoint copies each GPU's
// share to host memory over its host link.
CheckpointCosts checkpoint_costs(const ResolvedScenario& setup, const CheckpointSpec& spec,
                                 int64_t gpus, int64_t nodes) {
  double parameters = 0;
  for (const ModelLayer& layer : setup.model.layers) {
    parameters += layer.parameter_bytes / kFp32BytesPerParameter;
  }
  const BytesPerParameter per_parameter = bytes_per_parameter(setup.training);
  CheckpointCosts costs;
  costs.bytes = parameters * (per_parameter.weights + per_parameter.optimizer);
  const double per_node = costs.bytes / static_cast<double>(nodes);
  costs.write_s =
      std::max(per_node / spec.node_bytes_per_s, costs.bytes / spec.storage_write_bytes_per_s);
  costs.load_s =
      std::max(per_node / spec.node_bytes_per_s, costs.bytes / spec.storage_read_bytes_per_s);
  if (setup.cluster.has_host_link) {
    costs.snapshot_s =
        costs.bytes / static_cast<double>(gpus) / setup.cluster.host_link.bandwidth_bytes_per_s;
  }
  return costs;
}

// The run's plan and its interval: the given one, or the optimum. An asynchronous checkpoint
// cannot start before the previous one is persisted: a shorter interval waits for it.
int64_t plan_interval(RunPlan& plan, const GoodputRun& run) {
  const CheckpointSpec& spec = run.spec.checkpoint;
  int64_t interval = spec.interval_steps > 0 ? std::min(spec.interval_steps, plan.steps)
                                             : optimal_interval_steps(plan);
  if (spec.asynchronous) {
    const double gap = static_cast<double>(interval) * plan.step_s;
    if (spec.interval_steps == 0 && gap < run.checkpoint.write_s) {
      interval = std::min(plan.steps,
                          static_cast<int64_t>(std::ceil(run.checkpoint.write_s / plan.step_s)));
    } else if (gap < run.checkpoint.write_s) {
      plan.checkpoint_block_s += run.checkpoint.write_s - gap;
    }
  }
  return interval;
}

double ettr_at_optimum(const RunPlan& plan) {
  return expected_goodput(plan, optimal_interval_steps(plan)).ettr;
}

// ETTR against the interval, from one step to twenty times the optimum, on a log scale.
std::vector<std::pair<double, double>> ettr_by_interval(const RunPlan& plan, int64_t chosen) {
  std::set<int64_t> intervals = {chosen};
  const double top = std::max(2.0, std::min(static_cast<double>(plan.steps), 20.0 * chosen));
  for (int k = 0; k <= 48; ++k) {
    intervals.insert(static_cast<int64_t>(std::llround(std::pow(top, k / 48.0))));
  }
  std::vector<std::pair<double, double>> points;
  for (int64_t i : intervals) {
    if (i >= 1 && i <= plan.steps) {
      points.emplace_back(static_cast<double>(i) * plan.step_s, expected_goodput(plan, i).ettr);
    }
  }
  return points;
}

// ETTR of the same job on m times the GPUs and nodes (each replica as fast, failures m times as
// frequent, the checkpoint spread over m times the nodes), each at its optimal interval.
std::vector<std::pair<double, double>> ettr_by_gpus(const GoodputRun& run) {
  std::vector<std::pair<double, double>> points;
  for (const double m : {0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0}) {
    RunPlan plan = run.plan;
    plan.failures_per_s = run.failures_per_hour * m / 3600;
    const double nodes = std::max(1.0, static_cast<double>(run.nodes) * m);
    const double per_node_s = run.checkpoint.bytes / nodes / run.spec.checkpoint.node_bytes_per_s;
    const double write_s =
        std::max(per_node_s, run.checkpoint.bytes / run.spec.checkpoint.storage_write_bytes_per_s);
    const double load_s =
        std::max(per_node_s, run.checkpoint.bytes / run.spec.checkpoint.storage_read_bytes_per_s);
    plan.restart_s = run.restart_s - run.checkpoint.load_s + load_s;
    if (run.spec.checkpoint.asynchronous) {
      plan.checkpoint_block_s = run.checkpoint.snapshot_s / m;
      plan.checkpoint_persist_s = write_s;
    } else {
      plan.checkpoint_block_s = write_s;
    }
    points.emplace_back(static_cast<double>(run.gpus) * m, ettr_at_optimum(plan));
  }
  return points;
}

RunSpec run_spec(const LoadedScenario& loaded, const GoodputRequest& request) {
  RunSpec spec = resolve_run(ScenarioChecker(loaded), loaded.scenario);
  if (request.tokens) spec.tokens = request.tokens, spec.steps.reset();
  if (request.steps) spec.steps = request.steps, spec.tokens.reset();
  if (request.gpu_hour_cost) spec.gpu_hour_cost = *request.gpu_hour_cost;
  return spec;
}

GoodputRun price_run(const GoodputRequest& request, const std::vector<std::string>& overrides) {
  const LoadedScenario loaded = load_scenario(request.scenario, overrides);
  GoodputRun run;
  run.spec = run_spec(loaded, request);
  SimulationOptions options;
  options.engine = request.engine;
  options.limits = request.limits;
  options.timeline = false;
  const SimulateRun simulated = run_simulation(loaded, options);
  if (!simulated.result) {
    throw InputError(
        "goodput prices a run of one repeated step; a FreezePipe run (freeze) "
        "changes its step as it goes: simulate it instead");
  }
  const ResolvedScenario& setup = simulated.setup;
  run.name = setup.name;
  run.engine = engine_name(request.engine);
  run.step_s = simulated.metrics.iteration_time_s;
  run.gpus = simulated.result->program.num_devices;
  std::set<int> nodes;
  for (int64_t d = 0; d < run.gpus; ++d) nodes.insert(setup.cluster.devices[d].node);
  run.nodes = static_cast<int64_t>(nodes.size());
  if (setup.zoo && setup.zoo->seq_len() > 0) {
    run.tokens_per_step = static_cast<double>(setup.training.global_batch) * setup.zoo->seq_len();
  }
  int64_t steps = 0;
  if (run.spec.steps) {
    steps = *run.spec.steps;
  } else if (!run.spec.tokens) {
    throw InputError(
        "goodput needs the run's length: --tokens N or --steps N (or run.tokens, "
        "run.steps in the scenario)");
  } else if (run.tokens_per_step <= 0) {
    throw InputError(
        "--tokens needs the tokens of a step (training.global_batch x "
        "model.zoo.seq_len): this model has no sequence length; give --steps");
  } else {
    const double needed = std::ceil(*run.spec.tokens / run.tokens_per_step);
    // Far beyond any run (a trillion steps), and within an int64_t.
    if (!(needed <= 1e12)) {
      throw InputError("--tokens: " + format_number("%g", *run.spec.tokens) + " tokens are " +
                       format_number("%g", needed) + " steps of " +
                       format_number("%g", run.tokens_per_step) + ", more than 10^12");
    }
    steps = static_cast<int64_t>(needed);
  }
  if (steps > 1'000'000'000'000) throw InputError("--steps: more than 10^12 steps");
  run.failures_per_hour = job_failures_per_hour(run.spec.failures, run.gpus, run.nodes);
  run.mttf_h = job_mttf_hours(run.spec.failures, run.gpus, run.nodes);
  run.checkpoint = checkpoint_costs(setup, run.spec.checkpoint, run.gpus, run.nodes);
  const RestartSpec& restart = run.spec.restart;
  run.restart_s = restart.detect_s +
                  (restart.hot_spares ? restart.reschedule_s : restart.replace_node_s) +
                  run.checkpoint.load_s + restart.warmup_s;
  const bool async = run.spec.checkpoint.asynchronous;
  run.plan = {.steps = steps,
              .step_s = run.step_s,
              .failures_per_s = run.failures_per_hour / 3600,
              .checkpoint_block_s = async ? run.checkpoint.snapshot_s : run.checkpoint.write_s,
              .checkpoint_persist_s = async ? run.checkpoint.write_s : 0,
              .restart_s = run.restart_s};
  const int64_t interval = plan_interval(run.plan, run);
  run.estimate = expected_goodput(run.plan, interval);
  run.optimal_interval_s = optimal_interval_s(run.plan.failures_per_s, run.plan.checkpoint_block_s);
  run.young_interval_s = young_interval_s(run.plan.failures_per_s, run.plan.checkpoint_block_s);
  if (request.monte_carlo_runs > 0) {
    run.monte_carlo =
        monte_carlo_goodput(run.plan, interval, request.monte_carlo_runs, request.seed);
  }
  return run;
}

// Days to train on fewer and more data-parallel replicas, the global batch and the microbatch
// size held (each replica runs more or fewer microbatches): each a simulation of its own.
std::vector<std::pair<double, double>> days_by_gpus(const GoodputRequest& request,
                                                    const GoodputRun& base) {
  const LoadedScenario loaded = load_scenario(request.scenario, request.overrides);
  const proto::Training& t = loaded.scenario.training();
  const int64_t dp = t.has_data_parallel() ? t.data_parallel() : 1;
  const int64_t batch = t.global_batch();
  const int64_t microbatch_samples = std::max<int64_t>(1, batch / dp / t.microbatches());
  const int64_t gpus_per_replica = base.gpus / dp;
  const int64_t gpus_per_node = std::max<int64_t>(1, base.gpus / std::max<int64_t>(1, base.nodes));
  std::vector<std::pair<double, double>> points;
  for (const double m : {0.25, 0.5, 1.0, 2.0, 4.0}) {
    if (m == 1.0) {
      points.emplace_back(static_cast<double>(base.gpus), base.days());
      continue;
    }
    const auto replicas = static_cast<int64_t>(std::llround(static_cast<double>(dp) * m));
    if (replicas < 1 || static_cast<double>(replicas) != static_cast<double>(dp) * m ||
        batch % (replicas * microbatch_samples) != 0) {
      continue;
    }
    const int64_t gpus = gpus_per_replica * replicas;
    std::vector<std::string> overrides = request.overrides;
    overrides.push_back("training.data_parallel=" + std::to_string(replicas));
    overrides.push_back("training.microbatches=" +
                        std::to_string(batch / replicas / microbatch_samples));
    overrides.push_back("cluster.nodes=" +
                        std::to_string((gpus + gpus_per_node - 1) / gpus_per_node));
    GoodputRequest point = request;
    point.monte_carlo_runs = 0;
    try {
      const GoodputRun run = price_run(point, overrides);
      points.emplace_back(static_cast<double>(run.gpus), run.days());
    } catch (const InputError&) {
      // A layout the scenario's other fields do not allow at this size (expert groups, say).
    } catch (const RuntimeFailure&) {
      // Out of memory at this size.
    }
  }
  std::sort(points.begin(), points.end());
  return points;
}

nlohmann::json pairs_json(const std::vector<std::pair<double, double>>& points) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& [x, y] : points) list.push_back({x, y});
  return list;
}

std::string duration_text(double seconds) {
  if (seconds >= 2 * kSecondsPerDay) return format_number("%.1f days", seconds / kSecondsPerDay);
  if (seconds >= 2 * 3600) return format_number("%.1f h", seconds / 3600);
  if (seconds >= 120) return format_number("%.1f min", seconds / 60);
  return format_seconds(seconds);
}

}  // namespace

GoodputRun run_goodput(const GoodputRequest& request) {
  GoodputRun run = price_run(request, request.overrides);
  if (request.curves) {
    run.ettr_by_interval_s = ettr_by_interval(run.plan, run.estimate.interval_steps);
    run.ettr_by_gpus = ettr_by_gpus(run);
    run.days_by_gpus = days_by_gpus(request, run);
  }
  return run;
}

nlohmann::json GoodputRun::json() const {
  const double interval_s = static_cast<double>(estimate.interval_steps) * step_s;
  nlohmann::json causes = nlohmann::json::array();
  for (const FailureCause& c : spec.failures.causes) {
    const auto units = static_cast<double>(c.unit == FailureCause::Unit::kGpu ? gpus : nodes);
    causes.push_back({{"name", c.name},
                      {"per", c.unit == FailureCause::Unit::kGpu ? "gpu" : "node"},
                      {"job_failures_per_day", c.per_unit_hour * units * 24}});
  }
  nlohmann::json j = {
      {"scenario", name},
      {"engine", engine},
      {"gpus", gpus},
      {"nodes", nodes},
      {"step_s", step_s},
      {"steps", plan.steps},
      {"tokens", tokens_per_step * static_cast<double>(plan.steps)},
      {"mttf_h", mttf_h},
      {"failures_per_day", failures_per_hour * 24},
      {"failure_causes", causes},
      {"checkpoint_bytes", checkpoint.bytes},
      {"checkpoint_asynchronous", spec.checkpoint.asynchronous},
      {"checkpoint_interval_steps", estimate.interval_steps},
      {"checkpoint_interval_s", interval_s},
      {"optimal_interval_s", optimal_interval_s},
      {"young_interval_s", young_interval_s},
      {"checkpoint_write_s", checkpoint.write_s},
      {"checkpoint_snapshot_s", checkpoint.snapshot_s},
      {"checkpoint_block_s", plan.checkpoint_block_s},
      {"restart_s", restart_s},
      {"expected_s", estimate.expected_s},
      {"compute_s", estimate.compute_s},
      {"checkpoints_s", estimate.checkpoint_s},
      {"restarts_s", estimate.restart_s},
      {"lost_work_s", estimate.lost_work_s},
      {"expected_failures", estimate.failures},
      {"ettr", estimate.ettr},
      {"days", days()},
      {"gpu_hours", gpu_hours()},
  };
  j["cost"] = spec.gpu_hour_cost > 0 ? nlohmann::json(gpu_hours() * spec.gpu_hour_cost)
                                     : nlohmann::json(nullptr);
  if (monte_carlo.runs > 0) {
    j["monte_carlo"] = {{"runs", monte_carlo.runs},
                        {"seed", monte_carlo.seed},
                        {"mean_days", monte_carlo.mean_s / kSecondsPerDay},
                        {"p5_days", monte_carlo.p5_s / kSecondsPerDay},
                        {"p50_days", monte_carlo.p50_s / kSecondsPerDay},
                        {"p95_days", monte_carlo.p95_s / kSecondsPerDay},
                        {"mean_ettr", estimate.compute_s / monte_carlo.mean_s},
                        {"mean_failures", monte_carlo.mean_failures}};
  }
  if (!ettr_by_interval_s.empty()) {
    j["ettr_by_interval_s"] = pairs_json(ettr_by_interval_s);
    j["ettr_by_gpus"] = pairs_json(ettr_by_gpus);
    j["days_by_gpus"] = pairs_json(days_by_gpus);
  }
  return j;
}

void print_goodput(std::ostream& out, const GoodputRun& run) {
  const GoodputEstimate& e = run.estimate;
  const double tokens = run.tokens_per_step * static_cast<double>(run.plan.steps);
  out << "goodput of " << run.name << ": " << run.plan.steps << " steps"
      << (tokens > 0 ? format_number(" (%.4g tokens)", tokens) : "") << " on " << run.gpus
      << " GPUs (" << run.nodes << " nodes)\n\n";
  const auto row = [&](const std::string& label, const std::string& text) {
    out << pad(label, 16) << text << "\n";
  };
  row("step", format_seconds(run.step_s) + " (" + run.engine + ")");
  row("failures",
      (std::isfinite(run.mttf_h) ? "one every " + format_number("%.3g h", run.mttf_h) +
                                       format_number(" (%.3g a day)", run.failures_per_hour * 24)
                                 : std::string("none")) +
          (run.spec.default_failures ? ", Llama 3's rates" : ""));
  row("checkpoint",
      format_bytes(run.checkpoint.bytes) + " every " + std::to_string(e.interval_steps) +
          " steps (" + duration_text(static_cast<double>(e.interval_steps) * run.step_s) +
          (run.spec.checkpoint.interval_steps == 0 ? ", the optimum" : "") + "), written in " +
          format_seconds(run.checkpoint.write_s) +
          (run.spec.checkpoint.asynchronous
               ? ", asynchronous: training stops " + format_seconds(run.plan.checkpoint_block_s)
               : ", synchronous"));
  row("restart", duration_text(run.restart_s) + " (loading the checkpoint " +
                     format_seconds(run.checkpoint.load_s) + ")");
  row("wall clock", format_number("%.2f days", run.days()) +
                        format_number(" (%.1f expected failures)", e.failures));
  if (run.monte_carlo.runs > 0) {
    const MonteCarloSummary& mc = run.monte_carlo;
    row("Monte Carlo", format_number("%.2f days mean", mc.mean_s / kSecondsPerDay) +
                           format_number(", p5 %.2f", mc.p5_s / kSecondsPerDay) +
                           format_number(", p50 %.2f", mc.p50_s / kSecondsPerDay) +
                           format_number(", p95 %.2f days", mc.p95_s / kSecondsPerDay) + " over " +
                           std::to_string(mc.runs) + " runs");
  }
  row("ETTR", format_number("%.1f%%", 100 * e.ettr) + " (checkpoints " +
                  duration_text(e.checkpoint_s) + ", restarts " + duration_text(e.restart_s) +
                  ", lost work " + duration_text(e.lost_work_s) + ")");
  row("GPU-hours", format_number("%.4g", run.gpu_hours()));
  if (run.spec.gpu_hour_cost > 0) {
    row("cost", format_number("%.4g", run.gpu_hours() * run.spec.gpu_hour_cost) +
                    format_number(" at %.4g per GPU-hour", run.spec.gpu_hour_cost));
  }
}

}  // namespace pipetwin
