#include "sim/exec/analytic_executor.h"

#include "sim/exec/ring_allreduce.h"
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
      durations[i] = cluster.link(instr.device, instr.peer_device)
                         .transfer_seconds(static_cast<double>(instr.bytes));
    } else if (is_copy(instr.op)) {
      durations[i] = cluster.host_link.transfer_seconds(static_cast<double>(instr.bytes));
    } else {
      durations[i] = instr.compute_s;
    }
    durations[i] += instr.interference_s;
  }
  for (int32_t g = 0; g < program.num_groups(); ++g) {
    std::vector<int32_t> devices;
    for (int32_t m : program.members_of_group(g)) devices.push_back(program.instructions[m].device);
    const int32_t first = program.members_of_group(g).front();
    const double seconds =
        ring_allreduce_seconds(cluster, devices, program.instructions[first].bytes,
                               program.instructions[first].collectives);
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
