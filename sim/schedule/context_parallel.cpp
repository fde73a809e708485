#include "sim/schedule/context_parallel.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "sim/schedule/collective_triggers.h"
#include "sim/schedule/device_copies.h"

namespace pipetwin {
namespace {

// One key/value exchange of a pass among its C GPUs.
struct Exchange {
  Op op = Op::kAllGather;
  int64_t bytes = 0;
  int32_t collectives = 1;
  double lead_s = 0;
};

std::vector<Exchange> exchanges_of(const Instruction& pass, const StageCost& cost,
                                   proto::Training::ContextParallelAlgorithm algorithm) {
  const bool forward = pass.op == Op::kFwd;
  if ((!forward && !computes_input_gradient(pass.op)) || cost.cp_layers == 0) return {};
  const double samples = pass.range.size();
  const int32_t layers =
      std::min<int32_t>(cost.cp_layers, std::numeric_limits<uint16_t>::max() / 2);
  if (algorithm == proto::Training::ULYSSES) {
    // Before attention and after it: as many all-to-alls of the pass's bytes.
    return {{Op::kAllToAll, std::llround(cost.cp_qkvo_bytes_per_sample * samples), 2 * layers, 0}};
  }
  const double share = forward ? cost.cp_fwd_attention_share : cost.cp_bwd_attention_share;
  const double lead = algorithm == proto::Training::RING ? share * pass.compute_s : 0;
  const int64_t kv = std::llround(cost.cp_kv_bytes_per_sample * samples);
  std::vector<Exchange> out = {{Op::kAllGather, kv, layers, lead}};
  // The backward sends the keys' and values' gradients back to the GPUs that own them.
  if (!forward) out.push_back({Op::kReduceScatter, kv, layers, lead});
  return out;
}

}  // namespace

Program expand_context_parallel(const Program& program, const PipelineLayout& layout,
                                int32_t context_parallel,
                                proto::Training::ContextParallelAlgorithm algorithm) {
  const int32_t C = context_parallel;
  if (C == 1) return program;
  const int32_t n = program.size();
  ProgramBuilder builder(program.num_devices * C, program.num_stages, program.iterations,
                         program.global_batch);
  builder.reserve(static_cast<int64_t>(n) * C * 2,
                  static_cast<int64_t>(program.deps.size()) * C * 2 + static_cast<int64_t>(n) * C);
  // Everything but the collective lanes, lane by lane in order.
  DeviceCopies copies(program, C, builder);
  const auto at = [&](int32_t i, int32_t c) -> int32_t& { return copies.at(i, c); };
  const auto place = [&](const Instruction& ins, int32_t c) { return copies.place(ins, c); };
  // Each device's collective lane, in the order of what triggers its entries.
  const std::vector<int32_t> position = compute_positions(program);
  const std::vector<int32_t> trigger = collective_triggers(program, position);
  std::vector<std::vector<CollectiveLaneEntry>> lanes(program.num_devices);
  for (int32_t i = 0; i < n; ++i) {
    const Instruction& ins = program.instructions[i];
    if (is_collective(ins.op)) {
      lanes[ins.device].push_back(existing_entry(program, i, trigger[i]));
    } else if (!exchanges_of(ins, layout.costs[ins.stage], algorithm).empty()) {
      lanes[ins.device].push_back({position[i], false, i});
    }
  }
  std::vector<std::vector<int32_t>> last_exchange(n);  // pass -> its last exchange on each GPU
  for (auto& lane : lanes) {
    std::sort(lane.begin(), lane.end());
    for (const CollectiveLaneEntry& e : lane) {
      const Instruction& ins = program.instructions[e.index];
      if (e.existing) {
        for (int32_t c = 0; c < C; ++c) at(e.index, c) = builder.add(place(ins, c));
        continue;
      }
      last_exchange[e.index].assign(C, -1);
      for (const Exchange& x : exchanges_of(ins, layout.costs[ins.stage], algorithm)) {
        std::vector<int32_t> group;
        for (int32_t c = 0; c < C; ++c) {
          Instruction made = place(ins, c);
          made.op = x.op;
          made.compute_s = 0;
          made.interference_s = 0;
          made.stash_bytes = 0;
          made.peer_device = -1;
          made.bytes = x.bytes;
          made.collectives = static_cast<uint16_t>(x.collectives);
          made.lead_s = x.lead_s;
          const int32_t id = builder.add(made);
          // Each exchange waits for the pass (a ring starts under it), and for the one before.
          builder.add_dependency(id, at(e.index, c));
          if (last_exchange[e.index][c] >= 0) builder.add_dependency(id, last_exchange[e.index][c]);
          last_exchange[e.index][c] = id;
          group.push_back(id);
        }
        builder.group(group);
      }
    }
  }

  for (int32_t i = 0; i < n; ++i) {
    for (int32_t c = 0; c < C; ++c) {
      for (int32_t d : program.deps_of(i)) {
        // What consumed a pass consumes it once its keys and values are exchanged, except
        // a collective that starts under the pass itself (a gradient bucket). The
        // gradient reduction that does not waits for the ring too: the key and value
        // projections' weight gradients need the keys' and values' gradients it brings.
        // A ring may end before its pass does: they wait for both.
        builder.add_dependency(at(i, c), at(d, c));
        if (!last_exchange[d].empty() && !program.instructions[i].starts_under_compute()) {
          builder.add_dependency(at(i, c), last_exchange[d][c]);
        }
      }
      if (program.partner[i] >= 0 && is_send(program.instructions[i].op)) {
        builder.pair(at(i, c), at(program.partner[i], c));
      }
    }
    if (last_exchange[i].empty()) continue;
    const bool next_on_lane = i + 1 < n && program.lane_index(i + 1) == program.lane_index(i);
    for (int32_t c = 0; c < C && next_on_lane; ++c) {
      builder.add_dependency(at(i + 1, c), last_exchange[i][c]);
    }
  }
  // Gradients and weights are reduced and gathered over every member's C GPUs. An expert
  // group (MoE parallel folding) takes each member's C GPUs, or runs of them; routed experts'
  // gradients are reduced among the GPUs holding the same experts: the same place in their
  // runs (sim/spec/expert_folding.h).
  const ExpertGroupRuns runs = layout.expert_runs();
  for (int32_t g = 0; g < program.num_groups(); ++g) {
    const auto members = program.members_of_group(g);
    const GroupKind kind = program.kind_of_group(g);
    const bool exchange = kind == GroupKind::kExpertExchange;
    if (exchange || kind == GroupKind::kExpertGradients) {
      const int32_t parts = exchange ? C / runs.context : runs.context;
      for (int32_t part = 0; part < parts; ++part) {
        std::vector<int32_t> group;
        for (int32_t m : members) {
          for (int32_t c = 0; c < C; ++c) {
            if ((exchange ? runs.context_run(c) : runs.context_slot(c)) == part) {
              group.push_back(at(m, c));
            }
          }
        }
        builder.group(group, kind);
      }
      continue;
    }
    std::vector<int32_t> group;
    for (int32_t m : members) {
      for (int32_t c = 0; c < C; ++c) group.push_back(at(m, c));
    }
    builder.group(group, kind);
  }
  builder.set_context_parallel(C);
  return copies.finish(std::move(builder));
}

}  // namespace pipetwin
