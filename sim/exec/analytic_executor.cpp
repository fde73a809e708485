#include "sim/exec/analytic_executor.h"

#include "sim/exec/program_collectives.h"
#include "sim/network/point_to_point.h"
#include "sim/program/dependency_walk.h"
#include "sim/spec/errors.h"

namespace pipetwin {

ExecutionTimes run_analytic(const Program& program, const ClusterSpec& cluster) {
  ExecutionTimes times;
  // One streaming pass computes every duration, so the walk itself never touches the
  // (large) instructions.
  std::vector<double> durations(program.size());
  for (int32_t i = 0; i < program.size(); ++i) {
    const Instruction& instr = program.instructions[i];
    if (is_transfer(instr.op)) {
      durations[i] = device_transfer_seconds(cluster, instr.device, instr.peer_device,
                                             static_cast<double>(instr.bytes));
    } else if (is_copy(instr.op)) {
      durations[i] = host_copy_seconds(cluster, static_cast<double>(instr.bytes));
    } else {
      durations[i] = instr.compute_s;
    }
    durations[i] += instr.interference_s;
  }
  for (int32_t g = 0; g < program.num_groups(); ++g) {
    const double seconds = group_seconds(program, cluster, g);
    for (int32_t m : program.members_of_group(g)) {
      durations[m] = seconds + program.instructions[m].interference_s;
    }
  }
  const auto duration = [&](int32_t i, int32_t) { return durations[i]; };
  const WalkResult walk =
      walk_in_dependency_order(program, duration, times.start_s, times.end_s,
                               cluster.dispatch.issue_s, cluster.dispatch.wakeup_s);
  if (walk.executed != program.size()) {
    throw RuntimeFailure("analytic executor: the program deadlocks at " +
                         program.describe(walk.blocked));
  }
  return times;
}

}  // namespace pipetwin
