// Which device memory blocks each op of a replay allocates and frees, so that the GPU holds
// what the Program says it holds, offload included:
//   FWD      allocates its stash when it starts: the part its OFFLOAD will take away as a
//            block of its own, the rest as another;
//   OFFLOAD  frees the offloaded block when its copy ends;
//   RELOAD   allocates that part again when it starts;
//   BWD      frees, when it ends, its stage's oldest stashes (kept and reloaded parts),
//            as many bytes as the Program says it frees (microbatches of forward and
//            backward may differ in size, as in UMPIPE).
//   OFFLOAD_WEIGHTS frees nothing (it copies the live weights); RELOAD_WEIGHTS allocates
//            the version when it starts, freed when the last op waiting for it ends.
// Plain C++17 (nvcc includes it); tested on the CPU.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "backend/replay/replay_ops.h"

namespace pipetwin {

struct StashBlock {
  int32_t id = 0;
  int64_t bytes = 0;
};

struct StashActions {
  std::vector<StashBlock> allocate;  // at the op's start, on its stream
  std::vector<StashBlock> release;   // at the op's end, on its stream
};

struct StashLedger {
  std::vector<StashActions> actions;  // per op of the plan, in plan order
  int32_t blocks = 0;                 // ids run from 0 to blocks - 1
};

StashLedger stash_ledger(const ReplayPlan& plan);

// The most bytes the ledger's blocks hold at once when op k runs from start_s[k] to
// end_s[k] (plan order). At equal times releases come first, as in memory_curve.
int64_t stash_peak(const StashLedger& ledger, const std::vector<double>& start_s,
                   const std::vector<double>& end_s);

}  // namespace pipetwin
