#include "sim/freeze/training_run.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "sim/build_program.h"
#include "sim/exec/analytic_executor.h"
#include "sim/exec/make_timeline.h"
#include "sim/freeze/auto_freeze.h"
#include "sim/freeze/freeze_controller.h"
#include "sim/freeze/gradient_norms.h"
#include "sim/model/training_memory.h"
#include "sim/partition/balanced_partition.h"
#include "sim/spec/errors.h"

namespace pipetwin {

std::vector<FreezeEvent> freeze_events(const FreezeSpec& spec, int32_t layers, int32_t iterations) {
  std::vector<FreezeEvent> events;
  if (!spec.at.empty()) {
    for (const auto& [iteration, frozen] : spec.at) {
      if (frozen > (events.empty() ? 0 : events.back().frozen_layers)) {
        events.push_back({iteration, frozen});
      }
    }
    return events;
  }
  if (spec.measured()) {
    throw InputError("freeze: no source of freezing (at, log or synthetic) to simulate");
  }
  const int32_t interval = spec.interval_iterations;
  // Only whole intervals inside the run can freeze anything: the rule looks at an interval
  // once it has ended.
  const int32_t intervals = iterations / interval;
  const IntervalNorms norms =
      spec.log ? spec.log->norms
               : synthetic_interval_norms(*spec.synthetic, layers, interval, intervals);
  FreezeController controller(spec, layers, iterations);
  for (size_t k = 0; k < norms.size(); ++k) {
    const int64_t at = static_cast<int64_t>(k + 1) * interval;
    if (at > iterations) break;  // after the run's end (and perhaps past the int32 range)
    const int32_t before = controller.frozen();
    const int32_t after = controller.observe(norms[k]);
    if (after > before) events.push_back({static_cast<int32_t>(at), after});
  }
  return events;
}

ResolvedScenario phase_setup(const ResolvedScenario& base, const PhasePlan& plan) {
  ResolvedScenario setup = base;
  setup.freeze = FreezeSpec{};
  setup.training.iterations = 1;
  for (int32_t l = 0; l < plan.frozen_layers; ++l) setup.model.layers[l].frozen = true;
  setup.schedule.stages = plan.stages;
  setup.training.data_parallel = plan.data_parallel;
  setup.schedule.partition = plan.partition;
  return setup;
}

namespace {

double simulated_iteration(const ResolvedScenario& setup, const SimulationOptions& options,
                           bool* fits) {
  SimulationOptions relaxed = options;
  relaxed.allow_oom = true;
  const SimulationResult r = simulate_setup(setup, relaxed);
  if (fits) *fits = r.out_of_memory.empty();
  return *std::max_element(r.times.end_s.begin(), r.times.end_s.end());
}

// Layers per stage of the scenario as written (its partition, or balanced without freezing).
std::vector<int32_t> original_partition(const ResolvedScenario& base) {
  ResolvedScenario unfrozen = base;
  for (ModelLayer& layer : unfrozen.model.layers) layer.frozen = false;
  return place_layers(unfrozen);
}

}  // namespace

PhasePlan plan_phase(const ResolvedScenario& base, int32_t frozen, const SimulationOptions& options,
                     const PhasePlan* current) {
  PhasePlan plan;
  plan.frozen_layers = frozen;
  plan.stages = base.schedule.stages;
  plan.data_parallel = base.training.data_parallel;
  plan.partition = original_partition(base);
  if (!base.freeze.repartition) return plan;
  ResolvedScenario probe = phase_setup(base, plan);
  probe.schedule.partition.clear();
  // Rebalance by time for the new costs, unless the pipeline as placed runs faster: under
  // GPipe a frozen-heavy stage is forward-heavy and backward-light, which balancing the
  // sum of forward and backward does not see.
  const std::vector<int32_t> balanced = place_layers(probe);
  PhasePlan rebalanced = plan;
  rebalanced.partition = balanced;
  double best = simulated_iteration(phase_setup(base, plan), options, nullptr);
  const double balanced_time = simulated_iteration(phase_setup(base, rebalanced), options, nullptr);
  if (balanced_time <= best) {
    plan = rebalanced;
    best = balanced_time;
  }
  // Freezing more never makes the placement in use slower: keep it when it beats both.
  if (current != nullptr && current->stages == plan.stages &&
      current->data_parallel == plan.data_parallel && current->partition != plan.partition) {
    PhasePlan kept = plan;
    kept.partition = current->partition;
    const double kept_time = simulated_iteration(phase_setup(base, kept), options, nullptr);
    if (kept_time < best) {
      plan = kept;
      best = kept_time;
    }
  }
  if (!base.freeze.compress || frozen == 0) return plan;
  // Compress when the model, with its new costs, fits on fewer stages whose slowest is no
  // slower than the original pipeline's slowest before freezing (PipeTransformer's
  // criterion); the freed devices become replicas. Fewest stages first, and only if the
  // iteration, all-reduce included, simulates no slower than without compressing: over a
  // slow fabric the replicas' all-reduce can cost more than the compute they share.
  ResolvedScenario unfrozen = base;
  for (ModelLayer& layer : unfrozen.model.layers) layer.frozen = false;
  const double original_bottleneck = bottleneck_of(layer_times(unfrozen), original_partition(base));
  const std::vector<double> times = layer_times(probe);  // same microbatch size
  const int32_t stages = base.schedule.stages;
  const int32_t layers = static_cast<int32_t>(base.model.layers.size());
  for (int32_t fewer = 1; fewer < stages; ++fewer) {
    if (stages % fewer != 0 || fewer > layers) continue;
    const int32_t replicas = base.training.data_parallel * (stages / fewer);
    const int32_t batch = base.training.global_batch;
    if (batch % replicas != 0 || base.training.microbatches > batch / replicas) continue;
    const std::vector<int32_t> partition = balanced_partition(times, fewer);
    if (bottleneck_of(times, partition) > original_bottleneck * (1 + 1e-9)) continue;
    PhasePlan candidate = plan;
    candidate.stages = fewer;
    candidate.data_parallel = replicas;
    candidate.partition = partition;
    bool fits = false;
    const double time = simulated_iteration(phase_setup(base, candidate), options, &fits);
    if (fits && time <= best) return candidate;  // best: the uncompressed plan's time
  }
  return plan;
}

int32_t layer_owner(const PhasePlan& plan, int32_t replica, int32_t layer) {
  int32_t stage = 0, end = plan.partition[0];  // end: one past the stage's last layer
  while (layer >= end) end += plan.partition[++stage];
  return stage + replica * plan.stages;
}

bool holds_layer(const PhasePlan& plan, int32_t device, int32_t layer) {
  return device < plan.stages * plan.data_parallel &&
         layer_owner(plan, 0, layer) == device % plan.stages;
}

std::vector<LayerMove> layer_moves(const ResolvedScenario& base, const PhasePlan& from,
                                   const PhasePlan& to) {
  const BytesPerParameter per_parameter = bytes_per_parameter(base.training);
  std::vector<LayerMove> moves;
  const int32_t layers = static_cast<int32_t>(base.model.layers.size());
  for (int32_t r = 0; r < to.data_parallel; ++r) {
    for (int32_t l = 0; l < layers; ++l) {
      const int32_t target = layer_owner(to, r, l);
      if (holds_layer(from, target, l)) continue;
      LayerMove move;
      move.layer = l;
      move.source = layer_owner(from, r % from.data_parallel, l);
      move.target = target;
      move.with_optimizer_state = l >= to.frozen_layers;
      const double parameters = base.model.layers[l].parameter_bytes / kFp32BytesPerParameter;
      move.bytes =
          std::llround(parameters * (per_parameter.weights +
                                     (move.with_optimizer_state ? per_parameter.optimizer : 0)));
      moves.push_back(move);
    }
  }
  // In (source, target, layer) order: the order of the transfers and of their payloads.
  std::sort(moves.begin(), moves.end(), [](const LayerMove& a, const LayerMove& b) {
    return std::tie(a.source, a.target, a.layer) < std::tie(b.source, b.target, b.layer);
  });
  return moves;
}

Program migration_program(const ResolvedScenario& base, const PhasePlan& from,
                          const PhasePlan& to) {
  std::map<std::pair<int32_t, int32_t>, int64_t> bytes;  // (from, to) -> bytes
  for (const LayerMove& move : layer_moves(base, from, to)) {
    bytes[{move.source, move.target}] += move.bytes;
  }
  const int32_t devices = static_cast<int32_t>(base.cluster.devices.size());
  ProgramBuilder builder(devices, 1, 1, base.training.global_batch);
  // In (source, target) order on every lane: the first pending pair is at the head of
  // both its lanes, so the transfers never deadlock.
  for (const auto& [pair, amount] : bytes) {
    Instruction send;
    send.op = Op::kMigrate;
    send.device = pair.first;
    send.peer_device = pair.second;
    send.range = {0, base.training.global_batch};
    send.bytes = amount;
    Instruction recv = send;
    recv.op = Op::kMigrateRecv;
    recv.device = pair.second;
    recv.peer_device = pair.first;
    const int32_t a = builder.add(send), b = builder.add(recv);
    builder.pair(a, b);
  }
  builder.set_static_bytes(std::vector<int64_t>(devices, 0));
  builder.set_stage_device({0});
  return std::move(builder).finish();
}

namespace {

// Appends one phase's iteration after what the overview holds.
void append_to_overview(Timeline& overview, const Timeline& phase_timeline, size_t index,
                        const TrainingPhase& phase) {
  double offset = 0;
  for (const Span& s : overview.spans) offset = std::max(offset, s.end_s);
  // One iteration per phase (its spans say iteration 0): numbered as the phase's first.
  append_timeline(overview, phase_timeline, offset, phase.first_iteration, index);
  if (index > 0) {
    overview.instants.push_back(
        {0, "freeze " + std::to_string(phase.plan.frozen_layers) + " layers", offset});
    overview.instants.push_back({0,
                                 "repartition " + std::to_string(phase.plan.stages) + " stages x " +
                                     std::to_string(phase.plan.data_parallel) + " replicas",
                                 offset});
  }
}

}  // namespace

TrainingRun simulate_training(const ResolvedScenario& setup, const SimulationOptions& options) {
  const int32_t layers = static_cast<int32_t>(setup.model.layers.size());
  const int32_t iterations = setup.training.iterations;
  std::vector<FreezeEvent> events = freeze_events(setup.freeze, layers, iterations);
  events.insert(events.begin(), FreezeEvent{0, 0});
  TrainingRun run;
  for (size_t e = 0; e < events.size(); ++e) {
    TrainingPhase phase;
    phase.plan = plan_phase(setup, events[e].frozen_layers, options,
                            e > 0 ? &run.phases.back().plan : nullptr);
    phase.first_iteration = events[e].iteration;
    phase.iterations =
        (e + 1 < events.size() ? events[e + 1].iteration : iterations) - phase.first_iteration;
    SimulationResult result = simulate_setup(phase_setup(setup, phase.plan), options);
    phase.iteration_time_s =
        *std::max_element(result.times.end_s.begin(), result.times.end_s.end());
    append_to_overview(run.overview, result.timeline, e, phase);
    if (e == 0) run.first_phase = std::move(result);
    if (!run.phases.empty()) {
      const Program moves = migration_program(setup, run.phases.back().plan, phase.plan);
      Migration m;
      m.iteration = phase.first_iteration;
      for (const Instruction& i : moves.instructions) {
        if (i.op == Op::kMigrate) m.bytes += i.bytes;
      }
      if (moves.size() > 0) {
        const ExecutionTimes t = execute(moves, setup, options.engine);
        m.seconds = *std::max_element(t.end_s.begin(), t.end_s.end());
      }
      run.migrations.push_back(m);
      run.training_time_s += m.seconds;
    }
    run.training_time_s += phase.iterations * phase.iteration_time_s;
    run.phases.push_back(std::move(phase));
  }
  return run;
}

}  // namespace pipetwin
