// FreezePipe on real ranks (see real_run.h): the design's loop with real feedback.
#include <algorithm>
#include <set>

#include "backend/torch/clock_alignment.h"
#include "backend/torch/rank_executor.h"
#include "backend/torch/real_run.h"
#include "sim/driver/build_program.h"
#include "sim/exec/make_timeline.h"
#include "sim/exec/memory_curve.h"
#include "sim/freeze/freeze_controller.h"
#include "sim/spec/errors.h"

namespace pipetwin {
MeasuredRun run_freezing_as_rank(const ResolvedScenario& setup, const RankEnvironment& env,
                                 const RealRunOptions& options) {
  const FreezeSpec& spec = setup.freeze;
  const int32_t layers = static_cast<int32_t>(setup.model.layers.size());
  const int32_t iterations = setup.training.iterations;
  const int32_t interval = spec.interval_iterations;
  const SimulationOptions planning;  // analytic: every rank plans alike, quickly
  FreezeController controller(spec, layers, iterations);

  PhasePlan plan = plan_phase(setup, 0, planning);
  if (env.world_size != plan.stages * plan.data_parallel) {
    throw InputError("WORLD_SIZE=" + std::to_string(env.world_size) + " but the schedule needs " +
                     std::to_string(plan.stages * plan.data_parallel) + " ranks");
  }
  RankSession session = open_session(env, options.timeout_s);
  RankModel model(zoo_architecture(*setup.zoo), setup.training.optimizer, options.seed);
  MeasuredRun run;
  FreezingFigures& freezing = run.freezing.emplace();
  // Intervals in 64 bits: an interval near the largest int32 must not overflow.
  run.gradient_norms.assign(static_cast<size_t>((int64_t{iterations} + interval - 1) / interval),
                            std::vector<double>(layers));
  TrainingPhase phase{plan, 0, 0, 0};
  uint64_t parts = 0;

  auto close_phase = [&](int32_t next_iteration) {
    phase.iterations = next_iteration - phase.first_iteration;
    if (phase.iterations > 0) phase.iteration_time_s /= phase.iterations;
    freezing.phases.push_back(phase);
  };

  int32_t it = 0;
  while (it < iterations) {
    // Up to the end of the interval, or the next fixed freeze.
    int32_t end = static_cast<int32_t>(
        std::min<int64_t>(iterations, (int64_t{it} / interval + 1) * interval));
    for (const auto& [at, frozen] : spec.at) {
      if (at > it && at < end) end = at;
    }
    ResolvedScenario part = phase_setup(setup, plan);
    part.training.iterations = end - it;
    const Program program = build_program(part);
    RealRunOptions part_options = options;
    part_options.gradient_interval = end - it;
    const MeasuredRun result =
        execute_on_rank(part, program, session, model, part_options, ProgramContext{it, {}});
    run.losses.insert(run.losses.end(), result.losses.begin(), result.losses.end());
    run.weights = result.weights;
    for (int32_t l = 0; l < layers; ++l) {
      run.gradient_norms[it / interval][l] += result.gradient_norms.at(0)[l];
    }
    phase.iteration_time_s += result.times.span_s();
    const MemoryCurve memory = memory_curve(with_measured_stash(program, result), result.times);
    append_timeline(freezing.timeline,
                    make_timeline(program, part.cluster, result.times, memory, "torch"), 0, it,
                    parts++);
    it = end;

    // Feedback: which prefix trains no more from here on.
    int32_t frozen = model.frozen();
    if (!spec.at.empty()) {
      for (const auto& [at, prefix] : spec.at) {
        if (at <= it) frozen = std::max(frozen, prefix);
      }
    } else if (it % interval == 0 || it == iterations) {
      frozen = controller.observe(run.gradient_norms[(it - 1) / interval]);
    }
    if (frozen <= model.frozen() || it >= iterations) continue;

    const double event_time = steady_now_s() - session.clock_base_s;
    close_phase(it);
    const PhasePlan next = plan_phase(setup, frozen, planning, &plan);
    model.freeze_prefix(frozen);
    ProgramContext moving{it, layer_moves(setup, plan, next)};
    const Program migration = migration_program(setup, plan, next);
    Migration m;
    m.iteration = it;
    int64_t model_bytes = 0;
    if (migration.size() > 0) {
      const MeasuredRun moved = execute_on_rank(setup, migration, session, model, options, moving);
      for (int32_t i = 0; i < migration.size(); ++i) {
        if (migration.instructions[i].op != Op::kMigrate) continue;
        m.bytes += moved.payload_bytes[i];
        model_bytes += migration.instructions[i].bytes;
      }
      m.seconds = moved.times.span_s();
      append_timeline(freezing.timeline,
                      make_timeline(migration, setup.cluster, moved.times,
                                    memory_curve(migration, moved.times), "torch"),
                      0, it, parts++);
    }
    freezing.migrations.push_back(m);
    freezing.migration_model_bytes.push_back(model_bytes);
    std::set<int> kept;
    for (int32_t l = 0; l < layers; ++l) {
      if (holds_layer(next, env.rank, l)) kept.insert(l);
    }
    model.release_all_but(kept);
    for (int l : kept) {
      if (!model.holds(l)) {
        throw RuntimeFailure("rank " + std::to_string(env.rank) + ": layer " + std::to_string(l) +
                             " did not arrive in the repartition before iteration " +
                             std::to_string(it));
      }
    }
    freezing.timeline.instants.push_back(
        {0, "freeze " + std::to_string(frozen) + " layers", event_time});
    freezing.timeline.instants.push_back({0,
                                          "repartition " + std::to_string(next.stages) +
                                              " stages x " + std::to_string(next.data_parallel) +
                                              " replicas",
                                          event_time});
    plan = next;
    phase = TrainingPhase{plan, it, 0, 0};
  }
  close_phase(iterations);
  freezing.training_time_s = steady_now_s() - session.clock_base_s;
  return run;
}

}  // namespace pipetwin
