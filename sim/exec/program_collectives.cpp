#include "sim/exec/program_collectives.h"

#include "sim/network/expert_exchange.h"
#include "sim/network/network_model.h"

namespace pipetwin {

Collective program_collective(Op op) {
  switch (op) {
    case Op::kAllToAll:
      return kProgramAllToAll;
    case Op::kReduceScatter:
      return kProgramReduceScatter;
    case Op::kAllGather:
      return kProgramAllGather;
    default:
      return kProgramAllReduce;
  }
}

std::vector<int32_t> group_devices(const Program& program, int32_t group) {
  std::vector<int32_t> devices;
  for (int32_t m : program.members_of_group(group)) {
    devices.push_back(program.instructions[m].device);
  }
  return devices;
}

CollectiveSchedule group_flows(const Program& program, const ClusterSpec& cluster, int32_t group) {
  const Instruction& first = program.instructions[program.members_of_group(group).front()];
  if (program.kind_of_group(group) == GroupKind::kExpertExchange) {
    return expert_exchange_flows(cluster, group_devices(program, group), first.bytes,
                                 first.collectives, program.expert_dispatch);
  }
  return collective_flows(cluster, program_collective(first.op), group_devices(program, group),
                          first.bytes, first.collectives);
}

double group_seconds(const Program& program, const ClusterSpec& cluster, int32_t group) {
  return lock_step_seconds(cluster, group_flows(program, cluster, group));
}

}  // namespace pipetwin
