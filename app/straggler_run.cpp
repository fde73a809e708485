#include "app/straggler_run.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "analysis/time_breakdown.h"
#include "app/sweep_run.h"
#include "report/text_units.h"
#include "sim/driver/build_program.h"
#include "sim/exec/make_timeline.h"
#include "sim/scenario/device_list.h"
#include "sim/scenario/resolve_scenario.h"
#include "sim/scenario/scenario_checker.h"
#include "sim/driver/simulate.h"
#include "sim/spec/errors.h"
#include "sim/spec/stage_replicas.h"

namespace pipetwin {
namespace {

// Device g is copy t of tensor parallelism of copy c of context parallelism of layout device
// g / (T C); layout device d is pipeline device d mod (devices per replica) of replica
// d / (devices per replica).
DevicePlace place_of(const ResolvedScenario& setup, int32_t device) {
  const int32_t t = setup.training.tensor_parallel, c = setup.training.context_parallel;
  const int32_t per_replica =
      StageReplicas::of(setup.schedule.stage_replicas, setup.schedule.stages).devices();
  const int32_t layout = device / (t * c);
  return {layout % per_replica, layout / per_replica, device % t, device / t % c};
}

std::string joined(const std::vector<std::string>& items, char separator) {
  std::string text;
  for (const std::string& item : items)
    text += (text.empty() ? "" : std::string(1, separator)) + item;
  return text;
}

// Each op kind's time summed over the devices.
std::map<std::string, double> op_seconds(const SimulationResult& result) {
  std::map<std::string, double> seconds;
  const Program& p = result.program;
  for (int32_t i = 0; i < p.size(); ++i) {
    seconds[op_name(p.instructions[i].op)] += result.times.end_s[i] - result.times.start_s[i];
  }
  return seconds;
}

// The per-device mean of each part of the time breakdown.
std::map<std::string, double> mean_breakdown(const SimulationResult& result) {
  std::map<std::string, double> parts;
  const std::vector<DeviceTimeBreakdown> devices = time_breakdown(result.timeline);
  for (const DeviceTimeBreakdown& d : devices) {
    parts["compute"] += d.compute_s;
    parts["overlapped_comm"] += d.overlapped_comm_s;
    parts["exposed_comm"] += d.exposed_comm_s;
    parts["idle_waiting_on_peer"] += d.idle_peer_s;
    parts["idle_warmup_drain"] += d.idle_warmup_drain_s;
  }
  for (auto& [name, value] : parts)
    value /= static_cast<double>(std::max<size_t>(1, devices.size()));
  return parts;
}

void attribute_worst(StragglerRun& run, const std::string& scenario,
                     const std::vector<std::string>& overrides, const ResourceLimits& limits,
                     const std::string& field, int overrides_before) {
  const StragglerPoint& worst = run.points.front();
  std::vector<std::string> slow = overrides;
  const std::string entry = "cluster.overrides[" + std::to_string(overrides_before) + "]";
  slow.push_back(entry + ".devices=" + std::to_string(worst.device));
  slow.push_back(entry + "." + field + "=" + number_text(worst.factor));
  const SimulationResult base = simulate(load_scenario(scenario, overrides), {.limits = limits});
  const SimulationResult slowed = simulate(load_scenario(scenario, slow), {.limits = limits});
  const std::map<std::string, double> before = op_seconds(base), after = op_seconds(slowed);
  for (const auto& [op, seconds] : after) {
    const auto it = before.find(op);
    if (it != before.end() && it->second > 0) run.by_op[op] = seconds / it->second;
  }
  const std::map<std::string, double> parts_before = mean_breakdown(base);
  for (const auto& [part, seconds] : mean_breakdown(slowed)) {
    run.breakdown_change_s[part] = seconds - parts_before.at(part);
  }
}

}  // namespace

StragglerRun run_straggler(const StragglerRequest& request) {
  if (request.factors.empty()) throw InputError("--factor: give at least one speed factor");
  for (double f : request.factors) {
    if (!(f > 0 && f <= 1)) {
      throw InputError("--factor: each factor is the slow device's speed, in (0, 1]; got " +
                       number_text(f));
    }
  }
  const LoadedScenario loaded = load_scenario(request.scenario, request.overrides);
  const ResolvedScenario setup = resolve_scenario(loaded);
  const int overrides_before = loaded.scenario.cluster().overrides_size();
  const int32_t gpus =
      setup.training.tensor_parallel * setup.training.context_parallel *
      StageReplicas::of(setup.schedule.stage_replicas, setup.schedule.stages).devices() *
      setup.training.data_parallel;
  std::vector<int> devices;
  if (request.devices.empty()) {
    for (int d = 0; d < gpus / setup.training.data_parallel; ++d) devices.push_back(d);
  } else {
    std::string problem;
    const auto listed = parse_id_list(request.devices, gpus, problem);
    if (!listed) throw InputError("--devices: " + problem);
    devices = *listed;
  }
  const std::string field = request.links ? "link_scale" : "compute_scale";
  const std::string entry = "cluster.overrides[" + std::to_string(overrides_before) + "]";
  std::vector<std::string> ids, factors;
  for (int d : devices) ids.push_back(std::to_string(d));
  for (double f : request.factors) factors.push_back(number_text(f));

  // A straggler slows the plan the job runs: the balanced partition stays the baseline's.
  std::vector<std::string> overrides = request.overrides;
  if (setup.schedule.partition.empty()) {
    std::vector<std::string> counts;
    for (int32_t n : place_layers(setup)) counts.push_back(std::to_string(n));
    overrides.push_back("schedule.partition=[" + joined(counts, ',') + "]");
  }
  SweepRequest sweep;
  sweep.scenario = request.scenario;
  sweep.overrides = overrides;
  sweep.engine = request.engine;
  sweep.jobs = request.jobs;
  sweep.max_points = 1'000'000;
  sweep.limits = request.limits;
  // The baseline: a factor of 1 leaves every time as it was, bit for bit.
  sweep.vary = {entry + ".devices=" + ids.front(), entry + "." + field + "=1"};
  const SweepOutcome baseline = run_sweep_grid(sweep);
  if (baseline.failed > 0) throw RuntimeFailure(baseline.rows.front().result.error);
  StragglerRun run;
  run.name = setup.name;
  run.engine = request.engine;
  run.baseline_step_s = baseline.rows.front().result.iteration_time_s;
  sweep.vary = {entry + ".devices=" + joined(ids, ','),
                entry + "." + field + "=" + joined(factors, ',')};
  const SweepOutcome outcome = run_sweep_grid(sweep);
  for (const SweepRow& row : outcome.rows) {
    StragglerPoint point;
    point.device = std::stoi(row.point.settings[0].second);
    point.factor = std::stod(row.point.settings[1].second);
    point.place = place_of(setup, point.device);
    point.step_s = row.result.iteration_time_s;
    point.slowdown = point.step_s / run.baseline_step_s;
    if (row.result.failed()) point.error = row.result.error;
    run.points.push_back(point);
    if (!point.error.empty()) continue;
    for (auto [map, key] : {std::pair{&run.by_stage, point.place.stage},
                            std::pair{&run.by_dp_rank, point.place.data_parallel_rank},
                            std::pair{&run.by_tp_rank, point.place.tensor_rank}}) {
      double& worst = (*map)[point.factor][key];
      worst = std::max(worst, point.slowdown);
    }
  }
  std::stable_sort(run.points.begin(), run.points.end(),
                   [](const StragglerPoint& a, const StragglerPoint& b) {
                     return a.error.empty() && (!b.error.empty() || a.slowdown > b.slowdown);
                   });
  if (!run.points.empty() && run.points.front().error.empty()) {
    attribute_worst(run, request.scenario, overrides, request.limits, field, overrides_before);
  }
  return run;
}

nlohmann::json StragglerRun::json() const {
  const auto by_rank = [](const std::map<double, std::map<int32_t, double>>& maps) {
    nlohmann::json j = nlohmann::json::object();
    for (const auto& [factor, ranks] : maps) {
      nlohmann::json ranks_json = nlohmann::json::object();
      for (const auto& [rank, slowdown] : ranks) ranks_json[std::to_string(rank)] = slowdown;
      j[number_text(factor)] = ranks_json;
    }
    return j;
  };
  nlohmann::json points_json = nlohmann::json::array();
  for (const StragglerPoint& p : points) {
    nlohmann::json j = {{"device", p.device},
                        {"factor", p.factor},
                        {"stage", p.place.stage},
                        {"dp_rank", p.place.data_parallel_rank},
                        {"tp_rank", p.place.tensor_rank},
                        {"cp_rank", p.place.context_rank},
                        {"step_s", p.step_s},
                        {"slowdown", p.slowdown}};
    if (!p.error.empty()) j["error"] = p.error;
    points_json.push_back(j);
  }
  return {{"scenario", name},
          {"engine", engine},
          {"step_s", baseline_step_s},
          {"points", points_json},
          {"by_stage", by_rank(by_stage)},
          {"by_dp_rank", by_rank(by_dp_rank)},
          {"by_tp_rank", by_rank(by_tp_rank)},
          {"by_op", by_op},
          {"breakdown_change_s", breakdown_change_s}};
}

void print_straggler(std::ostream& out, const StragglerRun& run) {
  out << "straggler what-if of " << run.name << ": " << run.points.size()
      << " points, baseline step " << format_seconds(run.baseline_step_s) << " (" << run.engine
      << ")\n\n";
  for (const auto& [factor, stages] : run.by_stage) {
    out << "one device at " << format_number("%g", factor) << " of its speed, worst slowdown by "
        << "stage:";
    for (const auto& [stage, slowdown] : stages) {
      out << " " << stage << ": " << format_signed_percent(slowdown - 1);
    }
    out << "\n";
  }
  out << "\n"
      << pad("device", 8) << pad("factor", 8) << pad("stage", 7) << pad("dp", 6) << pad("tp", 5)
      << pad("step", 14) << "slowdown\n";
  const size_t shown = std::min<size_t>(run.points.size(), 10);
  for (size_t i = 0; i < shown; ++i) {
    const StragglerPoint& p = run.points[i];
    out << pad(std::to_string(p.device), 8) << pad(format_number("%g", p.factor), 8)
        << pad(std::to_string(p.place.stage), 7)
        << pad(std::to_string(p.place.data_parallel_rank), 6)
        << pad(std::to_string(p.place.tensor_rank), 5)
        << pad(p.error.empty() ? format_seconds(p.step_s) : "failed", 14)
        << (p.error.empty() ? format_signed_percent(p.slowdown - 1) : p.error) << "\n";
  }
  if (run.points.size() > shown) out << "... " << run.points.size() - shown << " more (--json)\n";
  if (!run.by_op.empty()) {
    out << "\nthe worst point's op kinds, time over all devices against the baseline:\n";
    for (const auto& [op, ratio] : run.by_op) {
      if (std::abs(ratio - 1) > 1e-9)
        out << "  " << pad(op, 16) << format_signed_percent(ratio - 1) << "\n";
    }
    out << "and where each device's time went (mean change per device):\n";
    for (const auto& [part, change] : run.breakdown_change_s) {
      out << "  " << pad(part, 22) << format_signed_seconds(change) << "\n";
    }
  }
}

}  // namespace pipetwin
