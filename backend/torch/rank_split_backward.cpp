// Zero-bubble schedules on real ranks: BWD_INPUT computes only the gradient of the stage's
// input (autograd::grad of the output with respect to the input, keeping the graph), and
// BWD_WEIGHT later the gradients of the stage's parameters through the same graph,
// accumulated into .grad as a BWD's backward() would.
#include <vector>

#include "backend/torch/rank_executor_state.h"
#include "sim/spec/errors.h"

namespace pipetwin {

// The FWD whose graph a split backward walks. Zero-bubble schedules cut the forward and
// the backward alike, so there is exactly one.
int32_t RankExecutor::forward_of_split(int32_t i) const {
  const std::vector<int32_t> forwards = covered_forwards(i);
  const Instruction& ins = p_.instructions[i];
  if (forwards.size() != 1 || p_.instructions[forwards[0]].range != ins.range) {
    throw RuntimeFailure(p_.describe(i) + ": a split backward needs its forward's samples exactly");
  }
  return forwards[0];
}

void RankExecutor::backward_input(int32_t i) {
  const Instruction& ins = p_.instructions[i];
  Stash& stash = activations_.stash(forward_of_split(i));
  if (computes_loss(ins.stage)) {
    const torch::Tensor target =
        ActivationStore::rows(data(ins.iteration).second, {0, p_.global_batch}, ins.range);
    const double share = static_cast<double>(ins.range.size()) / p_.global_batch;
    stash.root = zoo_loss(arch_, stash.output, target) * share;
    losses_[ins.iteration] += stash.root.item<double>();
    stash.root_grad = torch::ones_like(stash.root);
  } else {
    stash.root = stash.output;
    stash.root_grad = gather_pieces(i, Op::kRecvGrad);
  }
  if (reads_data(ins.stage)) return;  // the data needs no gradient: W does all the work
  // The graph stays for W; the gradient is detached from it, so sending it copies nothing.
  activations_.produced(i) = torch::autograd::grad({stash.root}, {stash.input}, {stash.root_grad},
                                                   /*retain_graph=*/true)[0]
                                 .detach();
}

void RankExecutor::backward_weight(int32_t i) {
  int32_t input = -1;  // this W's BWD_INPUT
  for (int32_t d : collectives_.inputs_of(i)) {
    if (p_.instructions[d].op == Op::kBwdInput) input = d;
  }
  if (input < 0) throw std::logic_error(p_.text(i) + " has no BWD_INPUT before it");
  const int32_t f = forward_of_split(input);
  Stash& stash = activations_.stash(f);
  std::vector<torch::Tensor> parameters;
  for (const torch::Tensor& parameter : stages_.at(p_.instructions[i].stage)->parameters()) {
    if (parameter.requires_grad()) parameters.push_back(parameter);
  }
  if (!parameters.empty()) {
    const std::vector<torch::Tensor> grads = torch::autograd::grad(
        {stash.root}, parameters, {stash.root_grad},
        /*retain_graph=*/false, /*create_graph=*/false, /*allow_unused=*/true);
    const torch::NoGradGuard no_grad;
    for (size_t k = 0; k < parameters.size(); ++k) {
      if (!grads[k].defined()) continue;
      torch::Tensor& grad = parameters[k].mutable_grad();
      if (grad.defined()) {
        grad.add_(grads[k]);
      } else {
        grad = grads[k].detach().clone();
      }
    }
  }
  activations_.release(f);  // the graph and its activations go
}

}  // namespace pipetwin
