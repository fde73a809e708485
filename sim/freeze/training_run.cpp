#include "sim/freeze/training_run.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "sim/driver/build_program.h"
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

double cached_bytes_per_sample(const ModelSpec& model, int32_t cached) {
  double bytes = 0;
  for (int32_t l = 0; l < cached; ++l) {
    const auto& consumers = model.layers[l].consumers;
    if (std::any_of(consumers.begin(), consumers.end(), [&](int c) { return c >= cached; })) {
      bytes += model.layers[l].activation_bytes_per_sample;
    }
  }
  return bytes;
}

std::vector<CacheEvent> cache_events(const ResolvedScenario& setup,
                                     const std::vector<FreezeEvent>& freezes) {
  std::vector<CacheEvent> events;
  const int32_t epoch = setup.freeze.cache_epoch_iterations;
  if (epoch <= 0) return events;
  const double samples = static_cast<double>(epoch) * setup.training.global_batch;
  const double host_bytes = setup.cluster.host_memory_bytes * setup.cluster.nodes;
  for (const FreezeEvent& f : freezes) {
    const int64_t ready = int64_t{f.iteration} + epoch;
    if (ready >= setup.training.iterations) break;
    if (f.frozen_layers == 0) continue;
    const double per_sample = cached_bytes_per_sample(setup.model, f.frozen_layers);
    if (samples * per_sample > host_bytes) continue;  // the prefix keeps running its forward
    events.push_back({static_cast<int32_t>(ready), f.frozen_layers,
                      std::llround(samples * per_sample),
                      std::llround(per_sample * setup.training.global_batch)});
  }
  return events;
}

ResolvedScenario phase_setup(const ResolvedScenario& base, const PhasePlan& plan) {
  ResolvedScenario setup = base;
  setup.freeze = FreezeSpec{};
  setup.training.iterations = 1;
  for (int32_t l = 0; l < plan.frozen_layers; ++l) setup.model.layers[l].frozen = true;
  if (plan.cached_layers > 0) {
    const double per_sample = cached_bytes_per_sample(base.model, plan.cached_layers);
    for (int32_t l = 0; l < plan.cached_layers; ++l) setup.model.layers[l].fwd = LayerCost{};
    LayerCost& load = setup.model.layers[plan.cached_layers - 1].fwd;
    load.fixed_s = base.cluster.host_link.latency_s;
    load.seconds_per_sample = per_sample / base.cluster.host_link.bandwidth_bytes_per_s;
  }
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
  return r.times.last_end_s();
}

// Layers per stage of the scenario as written (its partition, or balanced without freezing).
std::vector<int32_t> original_partition(const ResolvedScenario& base) {
  ResolvedScenario unfrozen = base;
  for (ModelLayer& layer : unfrozen.model.layers) layer.frozen = false;
  return place_layers(unfrozen);
}

}  // namespace

PhasePlan plan_phase(const ResolvedScenario& base, int32_t frozen, const SimulationOptions& options,
                     const PhasePlan* current, int32_t cached) {
  PhasePlan plan;
  plan.frozen_layers = frozen;
  plan.cached_layers = cached;
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
                        const TrainingPhase& phase, const TrainingPhase* previous) {
  double offset = 0;
  for (const Span& s : overview.spans) offset = std::max(offset, s.end_s);
  // One iteration per phase (its spans say iteration 0): numbered as the phase's first.
  append_timeline(overview, phase_timeline, offset, phase.first_iteration, index);
  if (previous != nullptr) {
    if (phase.plan.frozen_layers != previous->plan.frozen_layers) {
      overview.instants.push_back(
          {0, "freeze " + std::to_string(phase.plan.frozen_layers) + " layers", offset});
    }
    if (phase.plan.cached_layers != previous->plan.cached_layers) {
      overview.instants.push_back(
          {0, "cache " + std::to_string(phase.plan.cached_layers) + " layers", offset});
    }
    overview.instants.push_back({0,
                                 "repartition " + std::to_string(phase.plan.stages) + " stages x " +
                                     std::to_string(phase.plan.data_parallel) + " replicas",
                                 offset});
  }
}

}  // namespace

namespace {

// The run's phases: (first iteration, frozen prefix, cached prefix), one per change of either.
struct PhaseStart {
  int32_t iteration, frozen, cached;
};
std::vector<PhaseStart> phase_starts(const std::vector<FreezeEvent>& freezes,
                                     const std::vector<CacheEvent>& caches) {
  std::map<int32_t, PhaseStart> starts;
  PhaseStart state{0, 0, 0};
  size_t f = 0, c = 0;
  while (f < freezes.size() || c < caches.size()) {
    const bool freeze_next =
        c == caches.size() || (f < freezes.size() && freezes[f].iteration <= caches[c].iteration);
    if (freeze_next) {
      state.iteration = freezes[f].iteration;
      state.frozen = freezes[f++].frozen_layers;
    } else {
      state.iteration = caches[c].iteration;
      state.cached = caches[c++].cached_layers;
    }
    starts[state.iteration] = state;
  }
  std::vector<PhaseStart> result;
  for (const auto& [iteration, start] : starts) result.push_back(start);
  return result;
}

}  // namespace

TrainingRun simulate_training(const ResolvedScenario& setup, const SimulationOptions& options) {
  const int32_t layers = static_cast<int32_t>(setup.model.layers.size());
  const int32_t iterations = setup.training.iterations;
  std::vector<FreezeEvent> freezes = freeze_events(setup.freeze, layers, iterations);
  freezes.insert(freezes.begin(), FreezeEvent{0, 0});
  TrainingRun run;
  run.caches = cache_events(setup, freezes);
  const std::vector<PhaseStart> events = phase_starts(freezes, run.caches);
  for (size_t e = 0; e < events.size(); ++e) {
    TrainingPhase phase;
    const PhasePlan* previous = e > 0 ? &run.phases.back().plan : nullptr;
    phase.plan = plan_phase(setup, events[e].frozen, options, previous, events[e].cached);
    phase.first_iteration = events[e].iteration;
    phase.iterations =
        (e + 1 < events.size() ? events[e + 1].iteration : iterations) - phase.first_iteration;
    SimulationResult result = simulate_setup(phase_setup(setup, phase.plan), options);
    phase.iteration_time_s = result.times.last_end_s();
    // A new cache serves only if reading it beats running the prefix it replaces: small
    // images' early layers compute faster than their outputs cross PCIe.
    const int32_t cached_before = previous ? previous->cached_layers : 0;
    if (phase.plan.cached_layers > cached_before) {
      const PhasePlan without =
          plan_phase(setup, events[e].frozen, options, previous, cached_before);
      SimulationResult computed = simulate_setup(phase_setup(setup, without), options);
      if (computed.times.last_end_s() <= phase.iteration_time_s) {
        for (CacheEvent& c : run.caches) c.used &= c.iteration != phase.first_iteration;
        phase.plan = without;
        phase.iteration_time_s = computed.times.last_end_s();
        result = std::move(computed);
      }
    }
    append_to_overview(run.overview, result.timeline, e, phase,
                       run.phases.empty() ? nullptr : &run.phases.back());
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
