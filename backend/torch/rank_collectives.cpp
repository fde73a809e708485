#include "backend/torch/rank_collectives.h"

#include <algorithm>
#include <functional>
#include <vector>

#include "backend/torch/decoder_layers.h"
#include "backend/torch/tensor_parallel_group.h"
#include "backend/torch/tensor_parallel_layers.h"

namespace pipetwin {

RankCollectives::RankCollectives(const Program& program, RankSession& session,
                                 const RankModel& model)
    : p_(program), session_(session), model_(model), rank_(session.env.rank) {}

// One Gloo group per distinct set of devices a collective of this rank spans.
void RankCollectives::join_groups() {
  for (int32_t g = 0; g < p_.num_groups(); ++g) {
    const std::vector<int> ranks = group_ranks(p_.members_of_group(g)[0]);
    if (std::find(ranks.begin(), ranks.end(), rank_) == ranks.end()) continue;
    session_.group(ranks);
  }
}

std::vector<int> RankCollectives::group_ranks(int32_t i) const {
  std::vector<int> ranks;
  for (int32_t m : p_.members_of_group(p_.group[i])) ranks.push_back(p_.instructions[m].device);
  std::sort(ranks.begin(), ranks.end());
  return ranks;
}

// Tensor parallelism's ALLREDUCE after a FWD or BWD: its members are the T ranks of one
// stage (a data-parallel one spans replicas). The routed experts' gradients reduce among the
// ranks holding the same experts, which, with expert groups folded inside a replica, are
// some of those T ranks too.
bool RankCollectives::is_tensor_parallel_reduce(int32_t i) const {
  const int32_t size = model_.tensor_parallel().size;
  if (size == 1 || p_.kind_of_group(p_.group[i]) == GroupKind::kExpertGradients) return false;
  for (int32_t m : p_.members_of_group(p_.group[i])) {
    if (p_.instructions[m].device / size != rank_ / size) return false;
  }
  return true;
}

// Tensor parallelism's ALLREDUCE stands for the collectives of the pass before it, which
// have run inside that pass, where its layers need them (tensor_parallel_ops.h); expert
// parallelism's ALL_TO_ALL for the token exchanges of the pass's MoE layers (moe_mlp.h).
bool RankCollectives::ran_inside_pass(int32_t i) const {
  const Op op = p_.instructions[i].op;
  const bool tensor_op = op == Op::kAllreduce || op == Op::kReduceScatter || op == Op::kAllGather;
  return op == Op::kAllToAll || (tensor_op && is_tensor_parallel_reduce(i));
}

std::vector<int32_t> RankCollectives::inputs_of(int32_t i) const {
  std::vector<int32_t> inputs;
  const auto add = [&](int32_t d) {
    if (std::find(inputs.begin(), inputs.end(), d) == inputs.end()) inputs.push_back(d);
  };
  // A collective that ran inside a pass stands for it, through a chain of such collectives
  // (an expert all-to-all after a tensor-parallel one, both inside the pass).
  const std::function<void(int32_t)> visit = [&](int32_t d) {
    const Op op = p_.instructions[d].op;
    if (ran_inside_pass(d)) {
      for (int32_t before : p_.deps_of(d)) visit(before);
    } else if (op != Op::kAllGather && op != Op::kReduceScatter) {
      // ZeRO's gathers and scatters move weights and gradients, which no consumer reads.
      add(d);
    }
  };
  for (int32_t d : p_.deps_of(i)) visit(d);
  return inputs;
}

// Data parallelism: the stage's gradients summed across its replicas. Every replica's
// loss is already weighted by its share of the global minibatch, so the sum is the
// gradient of the mean. With expert parallelism the Program sums the dense gradients over
// every replica and the experts' over the ranks that hold the same experts (its group is
// of kind kExpertGradients), in two ALLREDUCEs (sim/schedule/lowering_updates.cpp): each
// expert got its gradient from every token routed to it, whichever rank the token came from.
void RankCollectives::allreduce(int32_t i, torch::nn::Sequential& stage) {
  if (ran_inside_pass(i)) return;
  // A gradient bucket that the simulators start under the backward: a LibTorch backward is
  // one autograd call here, so the stage's last bucket reduces every gradient at once.
  if (p_.instructions[i].starts_under_compute()) return;
  const std::vector<int> ranks = group_ranks(i);
  std::vector<torch::Tensor> dense, experts;
  for (const auto& layer : *stage) {
    const ExpertsApart apart = experts_apart(*layer.ptr(), layer.ptr()->parameters());
    experts.insert(experts.end(), apart.experts.begin(), apart.experts.end());
    dense.insert(dense.end(), apart.others.begin(), apart.others.end());
  }
  if (p_.kind_of_group(p_.group[i]) == GroupKind::kExpertGradients) {
    all_reduce_gradients(experts, session_.group(ranks));
    return;
  }
  if (!model_.expert_parallel().splits()) dense.insert(dense.end(), experts.begin(), experts.end());
  all_reduce_gradients(dense, session_.group(ranks));
}

// With sequence parallelism the replicated parameters (layernorms, row-parallel biases,
// position embeddings) see 1/T of the sequence on each rank: their gradients are summed
// over the group before the step, as Megatron-LM does, so that every rank applies the
// whole model's gradient.
void RankCollectives::reduce_sequence_parallel_gradients(torch::nn::Sequential& stage) {
  if (!model_.tensor_parallel().sequence_parallel) return;
  std::vector<torch::Tensor> replicated;
  for (const auto& layer : *stage) {
    for (const auto& p : replicated_parameters(*layer.ptr())) replicated.push_back(p);
  }
  all_reduce_gradients(replicated, model_.tensor_parallel());
}

}  // namespace pipetwin
