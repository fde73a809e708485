#include "sim/exec/analytic_executor.h"

#include "sim/errors.h"
#include "sim/program/dependency_walk.h"

namespace pipetwin {

ExecutionTimes run_analytic(const Program& program, const ClusterSpec& cluster) {
  ExecutionTimes times;
  const auto duration = [&](int32_t i, int32_t recv) {
    const Instruction& instr = program.instructions[i];
    if (recv < 0) return instr.compute_s;
    return cluster.link(instr.device, instr.peer_device)
        .transfer_seconds(static_cast<double>(instr.bytes));
  };
  const WalkResult walk = walk_in_dependency_order(program, duration, times.start_s, times.end_s);
  if (walk.executed != program.size()) {
    throw RuntimeFailure("analytic executor: the program deadlocks at " +
                         program.describe(walk.blocked));
  }
  return times;
}

}  // namespace pipetwin
