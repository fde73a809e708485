#include "sim/schedule/sharded_data_parallel.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "sim/schedule/collective_triggers.h"

namespace pipetwin {
namespace {

// What a new collective does, in the order they take a lane at one compute position: the
// next pass's first layer is gathered before this pass's gradients are scattered (FSDP
// prefetches it first), and the rest of the next pass's layers after them.
enum class ShardingStep : int32_t {
  kKept,           // a collective the Program had (an all-to-all)
  kGatherFirst,    // stage 3: a pass's first layer
  kScatterPass,    // stages 2, 3: one backward's gradients
  kScatterUpdate,  // stage 1: the gradients of the last backward, for the update
  kGatherRest,     // stage 3: a pass's other layers
  kGatherUpdated,  // stages 1, 2: the updated weights
};
inline constexpr int32_t kSteps = 6;

struct Entry {
  int32_t position = 0;  // the compute position after which it is issued
  ShardingStep step = ShardingStep::kKept;
  int32_t source = 0;   // the kept collective, or the compute op it belongs to
  int32_t reduce = -1;  // the all-reduce it stands for (-1: kept)
  bool operator<(const Entry& o) const {
    return std::tie(position, step, source, reduce) <
           std::tie(o.position, o.step, o.source, o.reduce);
  }
};

bool needs_weights(Op op) { return op == Op::kFwd || computes_input_gradient(op); }

// Hybrid sharding's all-reduce of a reduce-scatter's shard across the shard groups: keyed
// apart from the steps.
int32_t replicate_key(ShardingStep step) { return kSteps + static_cast<int32_t>(step); }

// Stage 3: the passes that gather their layers, by how long gathered weights stay whole.
std::vector<char> gathering_passes(const Program& program, Sharding::Reshard reshard) {
  std::vector<char> gathers(program.size(), 0);
  for (int32_t device = 0; device < program.num_devices; ++device) {
    const int32_t lane = device * kLaneCount + static_cast<int>(Lane::kCompute);
    // Per stage: the last pass that needed the weights, and the iteration it ran in.
    std::map<int32_t, std::pair<Op, int32_t>> last;
    for (int32_t i = program.lane_begin[lane]; i < program.lane_begin[lane + 1]; ++i) {
      const Instruction& ins = program.instructions[i];
      if (!is_pass(ins.op) || !needs_weights(ins.op)) continue;
      const auto before = last.find(ins.stage);
      const bool first_of_iteration =
          before == last.end() || before->second.second != ins.iteration;
      switch (reshard) {
        case Sharding::Reshard::kAfterEachPass:
          gathers[i] = 1;
          break;
        case Sharding::Reshard::kAfterBackward:
          gathers[i] =
              ins.op == Op::kFwd && (first_of_iteration || before->second.first != Op::kFwd);
          break;
        case Sharding::Reshard::kAfterStep:
          gathers[i] = first_of_iteration;
          break;
      }
      last[ins.stage] = {ins.op, ins.iteration};
    }
  }
  return gathers;
}

}  // namespace

int32_t shard_group_size(int32_t members, int32_t shard_size) {
  return shard_size > 0 && shard_size < members && members % shard_size == 0 ? shard_size : members;
}

Program shard_data_parallel(const Program& program, const PipelineLayout& layout,
                            const Sharding& sharding) {
  const int32_t zero_stage = sharding.zero_stage;
  if (zero_stage == 0) return program;
  // Gradients accumulated whole over the step and scattered once, as stage 1 does.
  const bool scatter_once =
      zero_stage == 1 || (zero_stage == 3 && sharding.reshard == Sharding::Reshard::kAfterStep);
  const int32_t n = program.size();
  const std::vector<char> gathers =
      zero_stage == 3 ? gathering_passes(program, sharding.reshard) : std::vector<char>(n, 0);
  const auto shard_of = [&](int32_t group) {
    return shard_group_size(static_cast<int32_t>(program.members_of_group(group).size()),
                            sharding.shard_size);
  };
  // The GPUs each member of a reduction stands for once the tensor- and context-parallel
  // expansions copy it: its C GPUs (context_parallel.h), and for routed experts the GPUs of
  // its replica holding the same experts (T x C / (EP x ETP) of them when expert groups fold
  // inside a replica; sim/spec/expert_folding.h).
  const auto gpus_per_member = [&](int32_t group) {
    if (program.kind_of_group(group) != GroupKind::kExpertGradients) {
      return static_cast<double>(layout.context_parallel);
    }
    return static_cast<double>(layout.expert_data_parallel) /
           static_cast<double>(program.members_of_group(group).size());
  };
  const std::vector<int32_t> position = compute_positions(program);
  const std::vector<int32_t> trigger = collective_triggers(program, position);
  const auto is_reduce = [&](int32_t i) { return program.instructions[i].op == Op::kAllreduce; };

  // Each stage's update all-reduces (dense and experts') by device, stage and iteration, and
  // the OPTIM each feeds.
  std::map<std::tuple<int32_t, int32_t, int32_t>, std::vector<int32_t>> reduces;
  std::vector<int32_t> optim_of(n, -1);
  for (int32_t a = 0; a < n; ++a) {
    if (!is_reduce(a)) continue;
    const Instruction& ins = program.instructions[a];
    reduces[{ins.device, ins.stage, ins.iteration}].push_back(a);
    for (int32_t u : program.dependents_of(a)) {
      if (program.instructions[u].op == Op::kOptim) optim_of[a] = u;
    }
    if (optim_of[a] < 0) throw std::logic_error("ZeRO: " + program.describe(a) + " feeds no OPTIM");
  }
  const auto reduces_of = [&](const Instruction& ins) -> const std::vector<int32_t>* {
    const auto it = reduces.find({ins.device, ins.stage, ins.iteration});
    return it == reduces.end() ? nullptr : &it->second;
  };
  const auto compute_lane = [&](int32_t device) {
    const int32_t lane = device * kLaneCount + static_cast<int>(Lane::kCompute);
    return std::pair{program.lane_begin[lane], program.lane_begin[lane + 1]};
  };

  // ZeRO-3: what a pass gathers first (its first layer), and then the rest.
  const auto gather_bytes = [&](int32_t a, const Instruction& pass, ShardingStep step) -> int64_t {
    const StageCost& cost = layout.costs[pass.stage];
    const int64_t first =
        pass.op == Op::kFwd ? cost.first_layer_weight_bytes : cost.last_layer_weight_bytes;
    const int64_t bytes = program.instructions[a].bytes;
    const int64_t head = cost.weight_bytes > 0
                             ? std::llround(static_cast<double>(bytes) * first / cost.weight_bytes)
                             : bytes;
    return step == ShardingStep::kGatherFirst ? head : bytes - head;
  };
  // Each device's collective lane, rebuilt.
  std::vector<std::vector<Entry>> lanes(program.num_devices);
  for (int32_t i = 0; i < n; ++i) {
    const Instruction& ins = program.instructions[i];
    if (is_collective(ins.op)) {
      if (!is_reduce(i)) {
        lanes[ins.device].push_back({trigger[i], ShardingStep::kKept, i, -1});
      } else {
        if (scatter_once)
          lanes[ins.device].push_back({trigger[i], ShardingStep::kScatterUpdate, i, i});
        if (zero_stage <= 2) {
          lanes[ins.device].push_back({position[optim_of[i]], ShardingStep::kGatherUpdated, i, i});
        }
      }
      continue;
    }
    const std::vector<int32_t>* own = reduces_of(ins);
    if (own == nullptr || !is_pass(ins.op)) continue;
    for (int32_t a : *own) {
      if (zero_stage >= 2 && !scatter_once && computes_weight_gradient(ins.op)) {
        lanes[ins.device].push_back({position[i], ShardingStep::kScatterPass, i, a});
      }
      if (gathers[i]) {
        lanes[ins.device].push_back({position[i] - 1, ShardingStep::kGatherFirst, i, a});
        if (layout.costs[ins.stage].layers > 1 &&
            gather_bytes(a, ins, ShardingStep::kGatherRest) > 0) {
          lanes[ins.device].push_back({position[i] - 1, ShardingStep::kGatherRest, i, a});
        }
      }
    }
  }

  ProgramBuilder builder(program.num_devices, program.num_stages, program.iterations,
                         program.global_batch);
  builder.reserve(static_cast<int64_t>(n) * 3, static_cast<int64_t>(program.deps.size()) * 3 + n);
  std::vector<int32_t> id(n, -1);
  for (int32_t i = 0; i < n; ++i) {
    const Instruction& ins = program.instructions[i];
    if (is_collective(ins.op)) continue;
    Instruction copy = ins;
    const std::vector<int32_t>* own = reduces_of(ins);
    if (ins.op == Op::kOptim && own != nullptr) {
      // Each replica updates its 1/N of the reduced gradients (1/S with hybrid sharding).
      const double whole = static_cast<double>(layout.costs[ins.stage].gradient_bytes);
      double saved = 0;
      for (int32_t a : *own) {
        const double holders =
            static_cast<double>(shard_of(program.group[a])) * gpus_per_member(program.group[a]);
        saved += program.instructions[a].bytes * (1 - 1 / holders);
      }
      if (whole > 0) copy.compute_s *= std::max(0.0, 1 - saved / whole);
    }
    id[i] = builder.add(copy);
  }

  // The new collectives: by what they stand for, and by group (the replaced all-reduce's
  // group, the step, and the how-manieth of that step on its device).
  // pass -> its ALL_GATHERs of the first layer and of the rest, by all-reduce
  std::vector<std::vector<std::pair<int32_t, int32_t>>> gather_first(n);
  std::vector<std::vector<int32_t>> gather_rest(n);
  std::vector<int32_t> update_scatter(n, -1);  // all-reduce -> stage 1's REDUCE_SCATTER
  std::vector<int32_t> last_scatter(n, -1);    // all-reduce -> its device's last pass one
  std::map<std::tuple<int32_t, int32_t, int32_t>, std::vector<std::pair<int32_t, int32_t>>> groups;
  std::vector<int32_t> made(static_cast<size_t>(n) * kSteps, 0);
  for (auto& lane : lanes) {
    std::sort(lane.begin(), lane.end());
    for (const Entry& e : lane) {
      if (e.step == ShardingStep::kKept) {
        id[e.source] = builder.add(program.instructions[e.source]);
        continue;
      }
      const Instruction& reduce = program.instructions[e.reduce];
      Instruction c =
          e.step == ShardingStep::kScatterUpdate || e.step == ShardingStep::kGatherUpdated
              ? reduce
              : program.instructions[e.source];
      c.compute_s = 0;
      c.stash_bytes = 0;
      c.collectives = 1;
      c.data_parallel = true;
      c.bytes = reduce.bytes;  // the gradients reduced, the weights gathered: as many
      switch (e.step) {
        case ShardingStep::kScatterPass:
        case ShardingStep::kScatterUpdate:
          c.op = Op::kReduceScatter;
          break;
        case ShardingStep::kGatherFirst:
        case ShardingStep::kGatherRest: {
          c.op = Op::kAllGather;
          c.bytes = gather_bytes(e.reduce, program.instructions[e.source], e.step);
          const int32_t rest = layout.costs[c.stage].layers - 1;
          if (e.step == ShardingStep::kGatherRest) {
            c.collectives = static_cast<uint16_t>(
                std::min<int32_t>(rest, std::numeric_limits<uint16_t>::max()));
          }
          break;
        }
        case ShardingStep::kGatherUpdated:
        case ShardingStep::kKept:
          c.op = Op::kAllGather;
          break;
      }
      if (c.op == Op::kAllGather) {
        c.bytes = std::llround(static_cast<double>(c.bytes) *
                               layout.weight_gather_bytes_per_gradient_byte);
      }
      const int32_t made_id = builder.add(c);
      const int32_t g = program.group[e.reduce];
      const auto members = program.members_of_group(g);
      const int32_t rank = static_cast<int32_t>(
          std::find(members.begin(), members.end(), e.reduce) - members.begin());
      const int32_t ordinal =
          made[static_cast<size_t>(e.reduce) * kSteps + static_cast<int>(e.step)]++;
      groups[{g, static_cast<int32_t>(e.step), ordinal}].push_back({rank, made_id});

      // Hybrid sharding: the scattered shard all-reduced across the shard groups, which what
      // waited for the scatter now waits for.
      int32_t reduced = made_id;
      const int32_t shard = shard_of(g);
      if ((e.step == ShardingStep::kScatterPass || e.step == ShardingStep::kScatterUpdate) &&
          shard < static_cast<int32_t>(members.size())) {
        Instruction across = c;
        across.op = Op::kAllreduce;
        across.bytes = std::llround(static_cast<double>(reduce.bytes) / shard);
        reduced = builder.add(across);
        builder.add_dependency(reduced, made_id);
        groups[{g, replicate_key(e.step), ordinal}].push_back({rank, reduced});
      }

      const Instruction& source = program.instructions[e.source];
      switch (e.step) {
        case ShardingStep::kGatherFirst: {
          // Issued when the op before the pass ends; the pass waits for it.
          const auto [begin, end] = compute_lane(source.device);
          if (position[e.source] > 0)
            builder.add_dependency(made_id, id[begin + position[e.source] - 1]);
          builder.add_dependency(id[e.source], made_id);
          gather_first[e.source].push_back({e.reduce, made_id});
          break;
        }
        case ShardingStep::kGatherRest:
          for (const auto& [reduce_id, first] : gather_first[e.source]) {
            if (reduce_id == e.reduce) builder.add_dependency(made_id, first);  // same lane
          }
          gather_rest[e.source].push_back(made_id);
          break;
        case ShardingStep::kScatterPass:
          builder.add_dependency(made_id, id[e.source]);
          last_scatter[e.reduce] = reduced;
          break;
        case ShardingStep::kScatterUpdate:
          for (int32_t d : program.deps_of(e.reduce)) builder.add_dependency(made_id, id[d]);
          update_scatter[e.reduce] = reduced;
          break;
        case ShardingStep::kGatherUpdated: {
          const int32_t optim = optim_of[e.reduce];
          builder.add_dependency(made_id, id[optim]);
          // The stage's next pass on this device computes with the gathered weights.
          const auto [begin, end] = compute_lane(source.device);
          for (int32_t j = optim + 1; j < end; ++j) {
            const Instruction& next = program.instructions[j];
            if (is_pass(next.op) && next.stage == source.stage) {
              builder.add_dependency(id[j], made_id);
              break;
            }
          }
          break;
        }
        case ShardingStep::kKept:
          break;
      }
    }
  }

  for (int32_t i = 0; i < n; ++i) {
    if (is_reduce(i)) continue;
    for (int32_t d : program.deps_of(i)) {
      if (is_reduce(d)) {
        const int32_t scatter = scatter_once ? update_scatter[d] : last_scatter[d];
        if (scatter < 0) throw std::logic_error("ZeRO: " + program.describe(d) + " has no scatter");
        builder.add_dependency(id[i], scatter);
        continue;
      }
      builder.add_dependency(id[i], id[d]);
      // A pass's outputs are ready once its last layer has been gathered and computed.
      for (int32_t rest : gather_rest[d]) builder.add_dependency(id[i], rest);
    }
    if (program.partner[i] >= 0 && is_send(program.instructions[i].op)) {
      builder.pair(id[i], id[program.partner[i]]);
    }
  }
  for (int32_t g = 0; g < program.num_groups(); ++g) {
    const auto members = program.members_of_group(g);
    if (is_reduce(members.front())) continue;
    std::vector<int32_t> kept;
    for (int32_t m : members) kept.push_back(id[m]);
    builder.group(kept, program.kind_of_group(g));
  }
  for (auto& [key, ranked] : groups) {
    if (ranked.size() != program.members_of_group(std::get<0>(key)).size()) {
      throw std::logic_error("ZeRO: the replicas' compute lanes differ");
    }
    std::sort(ranked.begin(), ranked.end());  // the all-reduce's ring order
    const GroupKind kind = program.kind_of_group(std::get<0>(key));
    const int32_t whole = static_cast<int32_t>(ranked.size());
    const int32_t shard = shard_of(std::get<0>(key));
    if (std::get<1>(key) >= kSteps) {
      // Across the shard groups: the members with the same place in theirs.
      for (int32_t place = 0; place < shard; ++place) {
        std::vector<int32_t> members;
        for (int32_t r = place; r < whole; r += shard) members.push_back(ranked[r].second);
        builder.group(members, kind);
      }
      continue;
    }
    for (int32_t first = 0; first < whole; first += shard) {
      std::vector<int32_t> members;
      for (int32_t r = first; r < first + shard; ++r) members.push_back(ranked[r].second);
      builder.group(members, kind);
    }
  }
  return finish_like(program, std::move(builder));
}

}  // namespace pipetwin
