// ZeRO on a rank (training.zero_stage, sim/schedule/sharded_data_parallel.h): each stage's
// shards over its data-parallel group, the REDUCE_SCATTERs and ALL_GATHERs of the Program,
// and what a pass does around them: it waits for its stage's weights to be gathered, and a
// backward hands its gradients over to its scatter (stages 2 and 3).
#include <algorithm>
#include <optional>
#include <stdexcept>

#include "backend/torch/decoder_layers.h"
#include "backend/torch/rank_executor_state.h"

namespace pipetwin {

namespace {

// A stage's trainable parameters, per layer: all, or only its experts' (`experts` true) or
// only the others (false).
std::vector<std::vector<torch::Tensor>> parameters_of(torch::nn::Sequential& stage,
                                                      std::optional<bool> experts) {
  std::vector<std::vector<torch::Tensor>> parameters;
  for (const auto& module : *stage) {
    std::vector<torch::Tensor> trained;
    for (const auto& p : module.ptr()->parameters()) {
      if (p.requires_grad()) trained.push_back(p);
    }
    if (!experts) {
      parameters.push_back(std::move(trained));
      continue;
    }
    ExpertsApart apart = experts_apart(*module.ptr(), trained);
    parameters.push_back(std::move(*experts ? apart.experts : apart.others));
  }
  return parameters;
}

}  // namespace

RankExecutor::ShardedPart RankExecutor::part_of(int32_t collective) const {
  return {p_.instructions[collective].stage,
          p_.kind_of_group(p_.group[collective]) == GroupKind::kExpertGradients};
}

std::vector<ZeroShards*> RankExecutor::shards_of(int32_t s) {
  std::vector<ZeroShards*> parts;
  for (bool experts : {false, true}) {
    if (const auto found = zero_.find({s, experts}); found != zero_.end()) {
      parts.push_back(found->second.get());
    }
  }
  return parts;
}

void RankExecutor::shard_stages(proto::Optimizer optimizer) {
  // With expert parallelism the experts are apart: sharded over the ranks holding the same
  // experts, the other weights over the replicas.
  const bool experts_apart = model_.expert_parallel().splits();
  for (int32_t i = 0; i < p_.size(); ++i) {
    const Instruction& ins = p_.instructions[i];
    if (ins.device != env_.rank || ins.op != Op::kReduceScatter || zero_.count(part_of(i))) {
      continue;
    }
    const ShardedPart part = part_of(i);
    const std::vector<int> ranks = collectives_.group_ranks(i);
    const int member =
        static_cast<int>(std::find(ranks.begin(), ranks.end(), env_.rank) - ranks.begin());
    const std::optional<bool> kind =
        experts_apart ? std::optional<bool>(part.second) : std::nullopt;
    zero_[part] = std::make_unique<ZeroShards>(parameters_of(stages_.at(ins.stage), kind),
                                               optimizer, member, static_cast<int>(ranks.size()));
    zero_collective_[part] = i;
  }
  for (int32_t i = 0; i < p_.size(); ++i) {
    const Instruction& ins = p_.instructions[i];
    if (ins.device != env_.rank || ins.op != Op::kReduceScatter || ins.starts_under_compute()) {
      continue;
    }
    // Through the collectives that ran inside the backward (tensor-parallel, all-to-all).
    for (int32_t d : collectives_.inputs_of(i)) {
      if (computes_weight_gradient(p_.instructions[d].op)) zero_last_backwards_.insert(d);
    }
  }
  if (!experts_apart) return;
  // A part no other rank holds (the experts of the only copy of their group, or, with one
  // replica and expert groups folded inside it, the dense weights) is a shard of one.
  for (auto& [s, stage] : stages_) {
    for (const bool experts : {false, true}) {
      if (!zero_.count({s, !experts}) || zero_.count({s, experts})) continue;
      zero_[{s, experts}] =
          std::make_unique<ZeroShards>(parameters_of(stage, experts), optimizer, 0, 1);
      zero_collective_[{s, experts}] = -1;
    }
  }
}

void RankExecutor::before_pass(const Instruction& ins) {
  if (zero_stage_ < 3) return;
  for (ZeroShards* shards : shards_of(ins.stage)) shards->wait_gathered();
}

// Sequence parallelism's replicated parameters (norms, the router) saw 1/T of the tokens on
// each tensor-parallel rank: their gradients are summed over the group before any shard takes
// them, after each backward (stages 2 and 3 take each backward's) or after the last one whose
// gradients stage 1 scatters, on the compute lane where the group's other collectives run.
void RankExecutor::after_pass(int32_t i) {
  const Instruction& ins = p_.instructions[i];
  if (zero_stage_ == 0 || !computes_weight_gradient(ins.op)) return;
  if (zero_stage_ >= 2 || zero_last_backwards_.count(i)) {
    collectives_.reduce_sequence_parallel_gradients(stages_.at(ins.stage));
  }
  if (zero_stage_ < 2) return;
  for (ZeroShards* shards : shards_of(ins.stage)) shards->take_gradients(i);
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
  zero_.at(part_of(i))->reduce_scatter(collectives_.group_of(i), pass);
}

// What the ALL_GATHER gathers (sim/schedule/sharded_data_parallel.h): after an update, every
// layer; before a pass, the layer it starts with (a backward starts at the stage's last);
// after that one, the others.
void RankExecutor::all_gather(int32_t i) {
  ZeroShards& shards = *zero_.at(part_of(i));
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
  for (auto& [part, shards] : zero_) {
    const int32_t collective = zero_collective_.at(part);
    if (collective >= 0) shards->all_gather(collectives_.group_of(collective), 0, shards->layers());
  }
}

}  // namespace pipetwin
