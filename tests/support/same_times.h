// Exact mode's promise: simgrid gives the analytic executor's timestamps, instruction by
// instruction, to 1e-9 relative. Names the first few instructions that differ.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <utility>

#include "sim/driver/build_program.h"
#include "sim/exec/analytic_executor.h"
#include "sim/exec/execution_times.h"
#include "sim/program/program.h"
#include "sim/simgrid/simgrid_executor.h"

namespace pipetwin::testing {

inline void expect_same_times(const Program& p, const ExecutionTimes& analytic,
                              const ExecutionTimes& simgrid) {
  ASSERT_EQ(analytic.start_s.size(), simgrid.start_s.size());
  int mismatches = 0;
  for (int32_t i = 0; i < p.size() && mismatches < 5; ++i) {
    for (auto [a, b] : {std::pair{analytic.start_s[i], simgrid.start_s[i]},
                        std::pair{analytic.end_s[i], simgrid.end_s[i]}}) {
      if (std::abs(a - b) > 1e-9 * std::abs(a) + 1e-15) {
        ++mismatches;
        ADD_FAILURE() << p.describe(i) << ": analytic " << a << " simgrid " << b;
      }
    }
  }
}

// `setup`'s Program on both engines, SimGrid in exact mode: the same times.
inline void expect_exact_simgrid_equals_analytic(ResolvedScenario setup) {
  setup.simgrid.exact = true;
  const Program p = build_program(setup);
  expect_same_times(p, run_analytic(p, setup.cluster),
                    run_simgrid(p, setup.cluster, setup.simgrid));
}

}  // namespace pipetwin::testing
