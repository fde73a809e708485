// Running a Program for real: one OS process per rank, LibTorch stages, c10d Gloo
// point-to-point. What TorchBackend (torch_backend.h) calls, and the references the tests
// compare with. Torch-free header: torch stays in the .cpp files.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "backend/common/real_backend.h"
#include "sim/freeze/training_run.h"
#include "sim/program/program.h"
#include "sim/spec/resolved_scenario.h"

namespace pipetwin {

// Runs this rank's part of `program`; every rank returns the merged result. Throws
// RuntimeFailure naming the rank and the instruction it waited on.
MeasuredRun run_as_rank(const ResolvedScenario& setup, const Program& program,
                        const RankEnvironment& env, const RealRunOptions& options);

// The same training in one process, without a pipeline: every microbatch through the
// whole model in order, gradients accumulated over the minibatch; with `freezes`, the
// prefix each names stops training from its iteration on. The correctness reference the
// pipeline must equal.
MeasuredRun run_reference(const ResolvedScenario& setup, const RealRunOptions& options,
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
MeasuredRun run_stale_reference(const ResolvedScenario& setup, const RealRunOptions& options,
                                const StaleWeights& stale);

// FreezePipe on real ranks: the run goes interval by interval, one Program each. After
// an interval the ranks' measured gradient norms go through the same FreezeController a
// simulated run uses (or the scenario's fixed `at` schedule applies); when the frozen
// prefix grows, the same plan_phase repartitions, and the layers that change rank move
// there with their trained weights and optimizer state, as MIGRATE transfers.
// MeasuredRun::freezing holds the phases and migrations; losses and weights the training's.
MeasuredRun run_freezing_as_rank(const ResolvedScenario& setup, const RankEnvironment& env,
                                 const RealRunOptions& options);

// The Program with its FWDs' and BWDs' stash bytes replaced by the measured ones, so that
// memory_curve gives the measured run's memory the way the simulators account it.
Program with_measured_stash(const Program& program, const MeasuredRun& run);

// Why this scenario cannot run for real, or "" if it can.
std::string real_run_unsupported(const ResolvedScenario& setup, const Program& program);

}  // namespace pipetwin
