// FreezePipe over a whole training run: the freeze events (from a fixed schedule, a freeze
// log, or synthetic gradients through the AutoFreeze rule) cut the run into phases; each
// phase's Program is scheduled for its frozen prefix (rebalanced by time, compressed onto
// fewer stages with the freed devices turned into data-parallel replicas when that is
// faster), and moving layers between phases costs MIGRATE transfers of their parameters
// (and optimizer state for layers still training). This is the design's loop: the
// Scheduler gets feedback between iterations and emits the next Program.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/program/program.h"
#include "sim/driver/simulate.h"
#include "sim/spec/resolved_scenario.h"

namespace pipetwin {

struct FreezeEvent {
  int32_t iteration = 0;      // the first iteration with the new prefix frozen
  int32_t frozen_layers = 0;  // the frozen prefix from then on
};

// AutoCache: from `iteration` on, the first `cached_layers` layers are read from a cache of
// `bytes` in host memory (cache_events below).
struct CacheEvent {
  int32_t iteration = 0;
  int32_t cached_layers = 0;
  int64_t bytes = 0;                     // the cache's size
  int64_t read_bytes_per_iteration = 0;  // what it sends to the devices
  // Whether the run reads it: not when running the prefix simulates no slower.
  bool used = true;
};

// The events of the run, in order; the frozen prefix only grows.
std::vector<FreezeEvent> freeze_events(const FreezeSpec& spec, int32_t layers, int32_t iterations);

// How one phase runs.
struct PhasePlan {
  int32_t frozen_layers = 0;
  int32_t stages = 0;
  int32_t data_parallel = 1;
  std::vector<int32_t> partition;  // layers per stage
  // AutoCache: the frozen prefix whose outputs are read from host memory instead of computed.
  int32_t cached_layers = 0;
};

struct TrainingPhase {
  PhasePlan plan;
  int32_t first_iteration = 0;
  int32_t iterations = 0;
  double iteration_time_s = 0;
};

struct Migration {
  int32_t iteration = 0;  // before this iteration
  int64_t bytes = 0;
  double seconds = 0;
};

struct TrainingRun {
  std::vector<TrainingPhase> phases;
  std::vector<Migration> migrations;  // one per phase change
  double training_time_s = 0;         // phases' iterations plus migrations
  std::vector<CacheEvent> caches;     // AutoCache: when each cached prefix starts serving
  SimulationResult first_phase;       // one iteration of the first phase
  // One iteration of every phase, back to back, with an instant at each freeze
  // ("freeze N layers") and repartition ("repartition K stages x D replicas").
  Timeline overview;
};

// The scenario with the first `frozen` layers frozen, one iteration, placed as `plan`; with
// a cached prefix, its layers compute nothing and the last of them costs the copy of its
// cached outputs over the host link instead.
ResolvedScenario phase_setup(const ResolvedScenario& base, const PhasePlan& plan);

// AutoCache: bytes per sample the cache of the first `cached` layers holds (their outputs
// read by a later layer).
double cached_bytes_per_sample(const ModelSpec& model, int32_t cached);

// When AutoCache can serve which prefix: the first iteration at which a frozen prefix has
// been frozen for a whole epoch (freeze.autocache.epoch_iterations) and its cache, one
// output per sample of an epoch, fits in the host memory of the cluster's nodes.
// simulate_training then reads a new cache only where that simulates faster than running
// the prefix (the phase keeps the previous cache otherwise).
std::vector<CacheEvent> cache_events(const ResolvedScenario& setup,
                                     const std::vector<FreezeEvent>& freezes);

// The plan for a frozen prefix: the original placement, or (repartition) balanced by time
// for the new costs when that simulates no slower, or the placement of the phase before
// (`current`, when it has as many stages) when that simulates faster still; and (compress)
// on the fewest stages (a divisor of the stage count) whose slowest stage, with the new
// costs, is no slower than the original pipeline's slowest before freezing, that fit in
// memory and that simulate no slower, the freed devices becoming data-parallel replicas.
PhasePlan plan_phase(const ResolvedScenario& base, int32_t frozen, const SimulationOptions& options,
                     const PhasePlan* current = nullptr, int32_t cached = 0);

// The device that holds `layer` in replica `replica` of a plan (phase_setup's placement:
// stage s of replica r on device s + r x stages), and whether `device` holds it at all.
int32_t layer_owner(const PhasePlan& plan, int32_t replica, int32_t layer);
bool holds_layer(const PhasePlan& plan, int32_t device, int32_t layer);

// One layer that a device holds after a repartition but did not hold before, and where
// it comes from: the same replica's owner, or replica 0's when there are more replicas
// than before. Bytes: its weights, plus optimizer state (and fp32 master weights) if it
// still trains.
struct LayerMove {
  int32_t layer = 0;
  int32_t source = 0;
  int32_t target = 0;
  bool with_optimizer_state = false;
  int64_t bytes = 0;
};
// Every move from one plan's placement to the next, in (source, target, layer) order.
std::vector<LayerMove> layer_moves(const ResolvedScenario& base, const PhasePlan& from,
                                   const PhasePlan& to);

// The MIGRATE transfers from one plan's placement to the next: one per (source, target)
// pair, carrying that pair's layer_moves in order.
Program migration_program(const ResolvedScenario& base, const PhasePlan& from, const PhasePlan& to);

TrainingRun simulate_training(const ResolvedScenario& setup, const SimulationOptions& options);

}  // namespace pipetwin
