// Running a Program for real: one OS process per rank, LibTorch stages, c10d Gloo
// point-to-point. Torch-free on purpose: the CLI includes this, torch stays in backend/.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "backend/common/rank_environment.h"
#include "sim/exec/execution_times.h"
#include "sim/freeze/gradient_norms.h"
#include "sim/freeze/training_run.h"
#include "sim/program/program.h"
#include "sim/spec/resolved_scenario.h"
#include "traces/timeline.h"

namespace pipetwin {

struct RealRunOptions {
  double timeout_s = 60;  // any wait longer than this fails the run
  uint64_t seed = 1;      // model initialisation and data
  // > 0: accumulate each layer's gradient L1 norm over intervals of this many iterations
  // (what AutoFreeze reads; RealRunResult::gradient_norms, a freeze log).
  int32_t gradient_interval = 0;
};

struct RealRunResult {
  ExecutionTimes times;         // every instruction, on rank 0's clock
  std::vector<double> losses;   // mean training loss of each iteration
  std::vector<double> weights;  // per layer: sum of its parameters after training
  double clock_offset_s = 0;    // this rank's measured offset to rank 0
  double train_s = 0;           // run_reference: seconds of the training loop alone
  // Per instruction (FWDs only, else 0): bytes of the activation tensors the FWD's layers
  // produced and autograd keeps for the backward, counted from the live tensors.
  std::vector<int64_t> stash_bytes;
  // With gradient_interval: [interval][layer] accumulated gradient L1 norm (replicas'
  // gradients are equal after their all-reduce; counted once).
  IntervalNorms gradient_norms;
  // Per instruction (MIGRATE only, else 0): bytes of the payload sent.
  std::vector<int64_t> payload_bytes;
  // Per instruction (FWD only, else -1): the weight version it ran with (its stage's
  // updates before it); asynchronous pipelines stash the older ones.
  std::vector<int32_t> forward_versions;
};

// Runs this rank's part of `program`; every rank returns the merged result. Throws
// RuntimeFailure naming the rank and the instruction it waited on.
RealRunResult run_as_rank(const ResolvedScenario& setup, const Program& program,
                          const RankEnvironment& env, const RealRunOptions& options);

// The same training in one process, without a pipeline: every microbatch through the
// whole model in order, gradients accumulated over the minibatch; with `freezes`, the
// prefix each names stops training from its iteration on. The correctness reference the
// pipeline must equal.
RealRunResult run_reference(const ResolvedScenario& setup, const RealRunOptions& options,
                            const std::vector<FreezeEvent>& freezes = {});

// The reference for asynchronous pipelines: microbatch j of iteration t runs stage s's
// layers with the weights as they were after `version[{s, t, j}]` updates, and every
// update applies the gradients gathered since the previous one (after each microbatch,
// or after each iteration). What weight stashing must compute.
struct StaleWeights {
  std::vector<std::pair<int32_t, int32_t>> stage_layers;  // [first, last) per stage
  std::map<std::tuple<int, int, int>, int> version;       // (stage, iteration, microbatch)
  bool update_every_microbatch = false;
};
RealRunResult run_stale_reference(const ResolvedScenario& setup, const RealRunOptions& options,
                                  const StaleWeights& stale);

// FreezePipe on real ranks: the run goes interval by interval, one Program each. After
// an interval the ranks' measured gradient norms go through the same FreezeController a
// simulated run uses (or the scenario's fixed `at` schedule applies); when the frozen
// prefix grows, the same plan_phase repartitions, and the layers that change rank move
// there with their trained weights and optimizer state, as MIGRATE transfers.
struct RealTrainingRun {
  std::vector<double> losses;                  // per iteration
  std::vector<double> weights;                 // per layer, at the end
  std::vector<TrainingPhase> phases;           // iteration_time_s: measured, mean of the phase
  std::vector<Migration> migrations;           // bytes: the payloads sent
  std::vector<int64_t> migration_model_bytes;  // what each migration Program counts
  IntervalNorms gradient_norms;                // per interval of freeze.interval_iterations
  double training_time_s = 0;                  // wall time on rank 0, planning included
  Timeline timeline;                           // every Program, on one clock, with instants
};
RealTrainingRun run_freezing_as_rank(const ResolvedScenario& setup, const RankEnvironment& env,
                                     const RealRunOptions& options);

// The Program with its FWDs' and BWDs' stash bytes replaced by the measured ones, so that
// memory_curve gives the measured run's memory the way the simulators account it.
Program with_measured_stash(const Program& program, const RealRunResult& run);

// Why this scenario cannot run for real, or "" if it can.
std::string real_run_unsupported(const ResolvedScenario& setup, const Program& program);

}  // namespace pipetwin
