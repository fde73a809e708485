#include "sim/schedule/expert_all_to_all.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "sim/schedule/collective_triggers.h"

namespace pipetwin {

bool expert_exchange_overlaps(ExpertOverlap overlap, Op op, const Op* next) {
  switch (overlap) {
    case ExpertOverlap::kNone:
      return false;
    case ExpertOverlap::kNextOp:
      return true;
    case ExpertOverlap::kOtherDirection:
      return next != nullptr && is_pass(*next) && is_backward(*next) != is_backward(op);
  }
  return false;
}

Program add_expert_all_to_alls(const Program& program, const PipelineLayout& layout,
                               ExpertOverlap overlap) {
  const int32_t group_replicas = layout.expert_group_replicas;
  const int32_t n = program.size();
  const int32_t per_replica = layout.devices_per_replica;
  ProgramBuilder builder(program.num_devices, program.num_stages, program.iterations,
                         program.global_batch);
  builder.reserve(static_cast<int64_t>(n) * 2, static_cast<int64_t>(program.deps.size()) * 2 + n);

  const std::vector<int32_t> position = compute_positions(program);
  const std::vector<int32_t> trigger = collective_triggers(program, position);
  const auto all_to_alls = [&](const Instruction& ins) -> int32_t {
    if (ins.op != Op::kFwd && !computes_input_gradient(ins.op)) return 0;
    const StageCost& cost = layout.costs[ins.stage];
    return ins.op == Op::kFwd ? cost.ep_fwd_all_to_alls : cost.ep_bwd_all_to_alls;
  };

  std::vector<int32_t> id(n, -1);
  for (int32_t i = 0; i < n; ++i) {
    if (!is_collective(program.instructions[i].op)) id[i] = builder.add(program.instructions[i]);
  }
  std::vector<std::vector<CollectiveLaneEntry>> lanes(program.num_devices);
  for (int32_t i = 0; i < n; ++i) {
    const Instruction& ins = program.instructions[i];
    if (is_collective(ins.op)) {
      lanes[ins.device].push_back({trigger[i], true, i});
    } else if (all_to_alls(ins) > 0) {
      lanes[ins.device].push_back({position[i], false, i});
    }
  }
  std::vector<int32_t> exchange(n, -1);  // pass -> its all-to-all
  // Groups by (expert group, device within the replica, compute position).
  std::map<std::tuple<int32_t, int32_t, int32_t>, std::vector<int32_t>> groups;
  for (auto& lane : lanes) {
    std::sort(lane.begin(), lane.end());
    for (const CollectiveLaneEntry& e : lane) {
      const Instruction& ins = program.instructions[e.index];
      if (e.existing) {
        id[e.index] = builder.add(ins);
        continue;
      }
      Instruction a2a = ins;
      a2a.op = Op::kAllToAll;
      a2a.compute_s = 0;
      a2a.stash_bytes = 0;
      const StageCost& cost = layout.costs[ins.stage];
      a2a.bytes = std::llround(
          (ins.op == Op::kFwd ? cost.ep_fwd_bytes_per_sample : cost.ep_bwd_bytes_per_sample) *
          ins.range.size());
      a2a.collectives = static_cast<uint16_t>(
          std::min<int32_t>(all_to_alls(ins), std::numeric_limits<uint16_t>::max()));
      exchange[e.index] = builder.add(a2a);
      const int32_t replica = ins.device / per_replica;
      groups[{replica / group_replicas, ins.device % per_replica, e.position}].push_back(
          exchange[e.index]);
    }
  }
  for (auto& [key, members] : groups) {
    if (static_cast<int32_t>(members.size()) != group_replicas) {
      throw std::logic_error("expert all-to-all: the replicas' compute lanes differ");
    }
    builder.group(members, GroupKind::kExpertExchange);
  }

  for (int32_t i = 0; i < n; ++i) {
    for (int32_t d : program.deps_of(i)) {
      // What consumed a pass consumes it once its tokens are back, except the pass's own
      // weight gradients (W), which need the gradients its experts received, not what it
      // sends back.
      const bool after_exchange = exchange[d] >= 0 && program.instructions[i].op != Op::kBwdWeight;
      builder.add_dependency(id[i], after_exchange ? exchange[d] : id[d]);
    }
    if (program.partner[i] >= 0 && is_send(program.instructions[i].op)) {
      builder.pair(id[i], id[program.partner[i]]);
    }
    if (exchange[i] < 0) continue;
    builder.add_dependency(exchange[i], id[i]);
    // The compute op that waits: the next on the lane, or the one after it when the next
    // overlaps (DualPipe's F&B, Megatron-Core's 1F1B pairs).
    const bool next_on_lane = i + 1 < n && program.lane_index(i + 1) == program.lane_index(i);
    const Op* next = next_on_lane ? &program.instructions[i + 1].op : nullptr;
    const int32_t gate =
        i + (expert_exchange_overlaps(overlap, program.instructions[i].op, next) ? 2 : 1);
    if (gate < n && program.lane_index(gate) == program.lane_index(i)) {
      builder.add_dependency(id[gate], exchange[i]);
    }
  }
  for (int32_t g = 0; g < program.num_groups(); ++g) {
    std::vector<int32_t> members;
    for (int32_t m : program.members_of_group(g)) members.push_back(id[m]);
    builder.group(members, program.kind_of_group(g));
  }
  return finish_like(program, std::move(builder));
}

}  // namespace pipetwin
