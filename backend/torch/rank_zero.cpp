// ZeRO on a rank (training.zero_stage, sim/schedule/sharded_data_parallel.h): each stage's
// shards over its data-parallel group, the REDUCE_SCATTERs and ALL_GATHERs of the Program,
// and what a pass does around them: it waits for its stage's weights to be gathered, and a
// backward hands its gradients over to its scatter (stages 2 and 3).
#include <algorithm>
#include <stdexcept>

#include "backend/torch/rank_executor_state.h"

namespace pipetwin {

void RankExecutor::shard_stages(proto::Optimizer optimizer) {
  for (int32_t i = 0; i < p_.size(); ++i) {
    const Instruction& ins = p_.instructions[i];
    if (ins.device != env_.rank || ins.op != Op::kReduceScatter || zero_.count(ins.stage)) {
      continue;
    }
    const std::vector<int> ranks = collectives_.group_ranks(i);
    const int member =
        static_cast<int>(std::find(ranks.begin(), ranks.end(), env_.rank) - ranks.begin());
    zero_[ins.stage] = std::make_unique<ZeroShards>(stages_.at(ins.stage), optimizer, member,
                                                    static_cast<int>(ranks.size()));
    zero_collective_[ins.stage] = i;
  }
}

void RankExecutor::before_pass(const Instruction& ins) {
  if (zero_stage_ < 3) return;
  if (const auto sharded = zero_.find(ins.stage); sharded != zero_.end()) {
    sharded->second->wait_gathered();
  }
}

void RankExecutor::after_pass(int32_t i) {
  const Instruction& ins = p_.instructions[i];
  if (zero_stage_ < 2 || !computes_weight_gradient(ins.op)) return;
  if (const auto sharded = zero_.find(ins.stage); sharded != zero_.end()) {
    sharded->second->take_gradients(i);
  }
}

// Stage 1 scatters the gradients the stage's backwards accumulated; stages 2 and 3 those of
// the backward it follows.
void RankExecutor::reduce_scatter(int32_t i) {
  const Instruction& ins = p_.instructions[i];
  // Gradient buckets: the last one scatters all of them (RankCollectives::allreduce).
  if (ins.starts_under_compute()) return;
  int32_t pass = -1;
  if (zero_stage_ >= 2) {
    for (int32_t d : p_.deps_of(i)) {
      if (computes_weight_gradient(p_.instructions[d].op)) pass = d;
    }
    if (pass < 0) throw std::logic_error(p_.describe(i) + " follows no backward");
  }
  zero_.at(ins.stage)->reduce_scatter(collectives_.group_of(i), pass);
}

// What the ALL_GATHER gathers (sim/schedule/sharded_data_parallel.h): after an update, every
// layer; before a pass, the layer it starts with (a backward starts at the stage's last);
// after that one, the others.
void RankExecutor::all_gather(int32_t i) {
  const Instruction& ins = p_.instructions[i];
  ZeroShards& shards = *zero_.at(ins.stage);
  const int layers = shards.layers();
  const auto pass_of = [&](int32_t gather) {
    for (int32_t u : p_.dependents_of(gather)) {
      if (is_pass(p_.instructions[u].op)) return p_.instructions[u].op;
    }
    throw std::logic_error(p_.describe(gather) + " comes before no pass");
  };
  int32_t first_gather = -1;
  for (int32_t d : p_.deps_of(i)) {
    const Op op = p_.instructions[d].op;
    if (op == Op::kOptim) return shards.all_gather(collectives_.group_of(i), 0, layers);
    if (op == Op::kAllGather) first_gather = d;
  }
  ZeroShards::LayerRange range;
  if (first_gather < 0) {
    const bool forward = pass_of(i) == Op::kFwd;
    range = forward ? ZeroShards::LayerRange{0, 1} : ZeroShards::LayerRange{layers - 1, layers};
  } else {
    const bool forward = pass_of(first_gather) == Op::kFwd;
    range = forward ? ZeroShards::LayerRange{1, layers} : ZeroShards::LayerRange{0, layers - 1};
  }
  shards.all_gather(collectives_.group_of(i), range.first, range.last);
}

// ZeRO-3 ends with the weights in shards: gathered whole once more for the results, in stage
// order on every member.
void RankExecutor::consolidate_shards() {
  if (zero_stage_ < 3) return;
  for (auto& [stage, shards] : zero_) {
    shards->all_gather(collectives_.group_of(zero_collective_.at(stage)), 0, shards->layers());
  }
}

}  // namespace pipetwin
