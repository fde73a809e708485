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
  // A pass's collectives: those that may start under it (a BWD's under its weight
  // gradients), then the rest; each with its op, bytes (as all-reduces), count and lead.
  struct Reduce {
    Op op = Op::kAllreduce;
    int64_t bytes = 0;
    int32_t count = 0;
    double lead_s = 0;
  };
  const auto tp_reduces = [&](const Instruction& ins) -> std::vector<Reduce> {
    // A split backward's all-reduces are those of its input gradient; the weight gradients
    // are local to each GPU's shard.
    if (T == 1 || (ins.op != Op::kFwd && !computes_input_gradient(ins.op))) return {};
    const StageCost& cost = layout.costs[ins.stage];
    const bool fwd = ins.op == Op::kFwd;
    const int32_t count = fwd ? cost.tp_fwd_collectives : cost.tp_bwd_collectives;
    const double per_sample = fwd ? cost.tp_fwd_bytes_per_sample : cost.tp_bwd_bytes_per_sample;
    const double samples = ins.range.size();
    const int64_t bytes = std::llround(per_sample * samples);
    std::vector<Reduce> reduces;
    if (ins.op == Op::kBwd && cost.tp_bwd_hidden_collectives > 0) {
      const int64_t hidden = std::llround(cost.tp_bwd_hidden_bytes_per_sample * samples);
      const int32_t n = cost.tp_bwd_hidden_collectives;
      const double lead = cost.tp_bwd_hidden_share * ins.compute_s;
      if (cost.tp_bwd_hidden_in_pairs) {
        // A ring reduce-scatter and all-gather of B bytes together cost a ring all-reduce.
        reduces.push_back({Op::kReduceScatter, hidden, n, lead});
        reduces.push_back({Op::kAllGather, hidden, n, 0.0});
      } else {
        reduces.push_back({Op::kAllreduce, hidden, n, lead});
      }
      reduces.push_back({Op::kAllreduce, bytes - hidden, count - n, 0.0});
    } else {
      reduces.push_back({Op::kAllreduce, bytes, count, 0.0});
    }
    std::erase_if(reduces, [](const Reduce& r) { return r.bytes <= 0 || r.count <= 0; });
    return reduces;
  };

  // Each device's collective lane, in the order of what triggers its entries.
  std::vector<std::vector<CollectiveLaneEntry>> lanes(program.num_devices);
  for (int32_t i = 0; i < n; ++i) {
    const Instruction& ins = program.instructions[i];
    if (is_collective(ins.op)) {
      lanes[ins.device].push_back(existing_entry(program, i, trigger[i]));
    } else if (!tp_reduces(ins).empty()) {
      lanes[ins.device].push_back({position[i], false, i});
    }
  }
  // pass -> its all-reduces on GPU 0 of its stage (the first and the last), those of GPUs
  // 1..T-1 right after each.
  std::vector<int32_t> tp_first(n, -1), tp_reduce(n, -1);
  std::vector<char> has_lead(n, 0);
  for (auto& lane : lanes) {
    std::sort(lane.begin(), lane.end());
    for (const CollectiveLaneEntry& e : lane) {
      const Instruction& ins = program.instructions[e.index];
      if (e.existing) {
        for (int32_t t = 0; t < T; ++t) at(e.index, t) = builder.add(place(ins, t));
        continue;
      }
      for (const Reduce& r : tp_reduces(ins)) {
        for (int32_t t = 0; t < T; ++t) {
          Instruction reduce = place(ins, t);
          reduce.op = r.op;
          reduce.compute_s = 0;
          reduce.stash_bytes = 0;
          reduce.bytes = r.bytes;
          reduce.collectives = static_cast<uint16_t>(
              std::min<int32_t>(r.count, std::numeric_limits<uint16_t>::max()));
          reduce.lead_s = r.lead_s;
          const int32_t id = builder.add(reduce);
          if (t > 0) continue;
          if (tp_first[e.index] < 0) tp_first[e.index] = id;
          tp_reduce[e.index] = id;
          has_lead[e.index] = has_lead[e.index] || r.lead_s > 0;
        }
      }
    }
  }

  std::vector<int32_t> group(T);
  for (int32_t i = 0; i < n; ++i) {
    for (int32_t t = 0; t < T; ++t) {
      for (int32_t d : program.deps_of(i)) {
        // What consumed a pass consumes it once reduced, and, where the reduction may end
        // before the pass does (it started under the pass with a lead), once computed.
        const bool reduced = tp_reduce[d] >= 0 && !waits_for_the_pass_itself(program, i);
        builder.add_dependency(at(i, t), reduced ? tp_reduce[d] + t : at(d, t));
        if (reduced && tp_first[d] == tp_reduce[d] && has_lead[d]) {
          builder.add_dependency(at(i, t), at(d, t));
        }
      }
      if (program.partner[i] >= 0 && is_send(program.instructions[i].op)) {
        builder.pair(at(i, t), at(program.partner[i], t));
      }
    }
    if (tp_reduce[i] < 0) continue;
    const bool next_on_lane = i + 1 < n && program.lane_index(i + 1) == program.lane_index(i);
    for (int32_t first = tp_first[i]; first <= tp_reduce[i]; first += T) {
      for (int32_t t = 0; t < T; ++t) group[t] = first + t;
      builder.group(group);
      for (int32_t t = 0; t < T; ++t) builder.add_dependency(first + t, at(i, t));
    }
    for (int32_t t = 0; t < T; ++t) {
      if (next_on_lane) builder.add_dependency(at(i + 1, t), tp_reduce[i] + t);
    }
  }
  // Every GPU of a stage takes part in its device's collectives with the GPUs of the same
  // tensor-parallel rank. An expert group with whole experts on each GPU takes the ranks, or a
  // run of them; routed experts' gradients are reduced among the GPUs holding the same
  // experts: the same place in their runs (sim/spec/expert_folding.h).
  const ExpertGroupRuns runs = expert_group_runs(
      layout.expert_parallel, layout.expert_tensor_parallel, T, layout.context_parallel);
  for (int32_t g = 0; g < program.num_groups(); ++g) {
    const GroupKind kind = program.kind_of_group(g);
    const bool exchange = kind == GroupKind::kExpertExchange;
    if (exchange || kind == GroupKind::kExpertGradients) {
      const int32_t parts = exchange ? T / runs.tensor : runs.tensor_slots;
      for (int32_t part = 0; part < parts; ++part) {
        std::vector<int32_t> members;
        for (int32_t m : program.members_of_group(g)) {
          for (int32_t t = 0; t < T; ++t) {
            if ((exchange ? runs.tensor_run(t) : runs.tensor_slot(t)) == part) {
              members.push_back(at(m, t));
            }
          }
        }
        builder.group(members, kind);
      }
      continue;
    }
    for (int32_t t = 0; t < T; ++t) {
      std::vector<int32_t> members;
      for (int32_t m : program.members_of_group(g)) members.push_back(at(m, t));
      builder.group(members, kind);
    }
  }
  builder.set_tensor_parallel(T);
  builder.set_context_parallel(program.context_parallel);
  return copies.finish(std::move(builder));
}

}  // namespace pipetwin
