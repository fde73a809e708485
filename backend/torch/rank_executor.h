// One rank's part of one Program, on a session and a model that outlive it: a plain run
// executes one Program; a FreezePipe run executes one per interval and the migrations
// between them, on the same layers.
#pragma once

#include <cstdint>
#include <vector>

#include "backend/torch/rank_model.h"
#include "backend/torch/rank_session.h"
#include "backend/torch/real_run.h"
#include "sim/freeze/training_run.h"

namespace pipetwin {

struct ProgramContext {
  int32_t first_iteration = 0;   // the run's iteration that the Program's iteration 0 is
  std::vector<LayerMove> moves;  // a migration Program: the layers its MIGRATEs carry
};

// Runs this rank's lanes of `program` and returns every rank's merged result. Throws
// RuntimeFailure naming the rank and the instruction it failed at or waited on.
MeasuredRun execute_on_rank(const ResolvedScenario& setup, const Program& program,
                            RankSession& session, RankModel& model, const RealRunOptions& options,
                            const ProgramContext& context);

}  // namespace pipetwin
