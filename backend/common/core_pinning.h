// --pin: a rank's threads on one core of those the process may use, so that the scheduler
// stops moving them between cores (less run-to-run noise on a shared machine).
#pragma once

#include "backend/common/rank_environment.h"

namespace pipetwin {

// The cores this process may use as it started, before pin_to_own_core narrowed them.
int cores_before_pinning();

// This rank's threads (the lanes, the transport's, LibTorch's, all started after this) on
// one allowed core: local rank r on the r-th, modulo their count. Does nothing when the
// affinity cannot be read.
void pin_to_own_core(const RankEnvironment& env);

}  // namespace pipetwin
