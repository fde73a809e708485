// A rank's collectives: the Gloo groups its all-reduces span, joined up front, and data
// parallelism's all-reduce of a stage's gradients over its replicas.
#include <algorithm>
#include <vector>

#include "backend/torch/rank_executor_state.h"

namespace pipetwin {

// One Gloo group per distinct set of devices a collective of this rank spans, created
// in Program order, which every member sees the same.
void RankExecutor::join_collective_groups() {
  for (int32_t g = 0; g < p_.num_groups(); ++g) {
    std::vector<int> ranks;
    for (int32_t m : p_.members_of_group(g)) ranks.push_back(p_.instructions[m].device);
    std::sort(ranks.begin(), ranks.end());
    if (std::find(ranks.begin(), ranks.end(), env_.rank) == ranks.end()) continue;
    session_.group(ranks);
  }
}

// Data parallelism: the stage's gradients summed across its replicas. Every replica's
// loss is already weighted by its share of the global minibatch, so the sum is the
// gradient of the mean.
void RankExecutor::allreduce(int32_t i) {
  const Instruction& ins = p_.instructions[i];
  std::vector<int> ranks;
  for (int32_t m : p_.members_of_group(p_.group[i])) ranks.push_back(p_.instructions[m].device);
  std::sort(ranks.begin(), ranks.end());
  std::vector<torch::Tensor> grads;
  for (const auto& p : stages_.at(ins.stage)->parameters()) {
    if (p.grad().defined()) grads.push_back(p.grad().flatten());
  }
  if (grads.empty()) return;
  std::vector<torch::Tensor> flat = {torch::cat(grads)};
  session_.group(ranks).allreduce(flat)->wait();
  int64_t offset = 0;
  for (const auto& p : stages_.at(ins.stage)->parameters()) {
    if (!p.grad().defined()) continue;
    const int64_t n = p.grad().numel();
    p.mutable_grad().copy_(flat[0].slice(0, offset, offset + n).view_as(p.grad()));
    offset += n;
  }
}

}  // namespace pipetwin
