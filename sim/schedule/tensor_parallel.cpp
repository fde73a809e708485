#include "sim/schedule/tensor_parallel.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "sim/schedule/collective_triggers.h"
#include "sim/schedule/device_copies.h"

namespace pipetwin {

Program expand_tensor_parallel(const Program& program, const PipelineLayout& layout,
                               int32_t tensor_parallel) {
  const int32_t T = tensor_parallel;
  const int32_t n = program.size();
  ProgramBuilder builder(program.num_devices * T, program.num_stages, program.iterations,
                         program.global_batch);
  builder.reserve(static_cast<int64_t>(n) * T * 2,
                  static_cast<int64_t>(program.deps.size()) * T * 3 + static_cast<int64_t>(n) * T);
  // Everything but the collective lanes, lane by lane in order.
  DeviceCopies copies(program, T, builder);
  const auto at = [&](int32_t i, int32_t t) -> int32_t& { return copies.at(i, t); };
  const auto place = [&](const Instruction& ins, int32_t t) { return copies.place(ins, t); };

  // Compute-lane positions, for ordering the collective lanes.
  const std::vector<int32_t> position = compute_positions(program);
  const std::vector<int32_t> trigger = collective_triggers(program, position);
  const auto tp_bytes = [&](const Instruction& ins) -> std::pair<int64_t, int32_t> {
    // A split backward's all-reduces are those of its input gradient; the weight gradients
    // are local to each GPU's shard.
    if (T == 1 || (ins.op != Op::kFwd && !computes_input_gradient(ins.op))) return {0, 0};
    const StageCost& cost = layout.costs[ins.stage];
    const bool fwd = ins.op == Op::kFwd;
    const int32_t count = fwd ? cost.tp_fwd_collectives : cost.tp_bwd_collectives;
    const double per_sample = fwd ? cost.tp_fwd_bytes_per_sample : cost.tp_bwd_bytes_per_sample;
    return {std::llround(per_sample * ins.range.size()), count};
  };

  // Each device's collective lane, in the order of what triggers its entries.
  std::vector<std::vector<CollectiveLaneEntry>> lanes(program.num_devices);
  for (int32_t i = 0; i < n; ++i) {
    const Instruction& ins = program.instructions[i];
    if (is_collective(ins.op)) {
      lanes[ins.device].push_back(existing_entry(program, i, trigger[i]));
    } else if (const auto [bytes, count] = tp_bytes(ins); bytes > 0 && count > 0) {
      lanes[ins.device].push_back({position[i], false, i});
    }
  }
  // pass -> its all-reduce on GPU 0 of its stage, those of GPUs 1..T-1 right after.
  std::vector<int32_t> tp_reduce(n, -1);
  for (auto& lane : lanes) {
    std::sort(lane.begin(), lane.end());
    for (const CollectiveLaneEntry& e : lane) {
      const Instruction& ins = program.instructions[e.index];
      for (int32_t t = 0; t < T; ++t) {
        if (e.existing) {
          at(e.index, t) = builder.add(place(ins, t));
          continue;
        }
        Instruction reduce = place(ins, t);
        reduce.op = Op::kAllreduce;
        reduce.compute_s = 0;
        reduce.stash_bytes = 0;
        const auto [bytes, count] = tp_bytes(ins);
        reduce.bytes = bytes;
        reduce.collectives =
            static_cast<uint16_t>(std::min<int32_t>(count, std::numeric_limits<uint16_t>::max()));
        const int32_t id = builder.add(reduce);
        if (t == 0) tp_reduce[e.index] = id;
      }
    }
  }

  std::vector<int32_t> group(T);
  for (int32_t i = 0; i < n; ++i) {
    for (int32_t t = 0; t < T; ++t) {
      for (int32_t d : program.deps_of(i)) {
        // What consumed a pass consumes it once reduced.
        const bool reduced = tp_reduce[d] >= 0 && !waits_for_the_pass_itself(program, i);
        builder.add_dependency(at(i, t), reduced ? tp_reduce[d] + t : at(d, t));
      }
      if (program.partner[i] >= 0 && is_send(program.instructions[i].op)) {
        builder.pair(at(i, t), at(program.partner[i], t));
      }
    }
    if (tp_reduce[i] < 0) continue;
    for (int32_t t = 0; t < T; ++t) group[t] = tp_reduce[i] + t;
    builder.group(group);
    const bool next_on_lane = i + 1 < n && program.lane_index(i + 1) == program.lane_index(i);
    for (int32_t t = 0; t < T; ++t) {
      builder.add_dependency(tp_reduce[i] + t, at(i, t));
      if (next_on_lane) builder.add_dependency(at(i + 1, t), tp_reduce[i] + t);
    }
  }
  for (int32_t g = 0; g < program.num_groups(); ++g) {
    for (int32_t t = 0; t < T; ++t) {
      std::vector<int32_t> members;
      for (int32_t m : program.members_of_group(g)) members.push_back(at(m, t));
      builder.group(members);
    }
  }
  builder.set_tensor_parallel(T);
  builder.set_context_parallel(program.context_parallel);
  return copies.finish(std::move(builder));
}

}  // namespace pipetwin
