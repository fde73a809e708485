// FreezePipe's MIGRATE: the layers that change rank between two phases move to their new
// rank with their trained weights and optimizer state, as one send/recv pair's payload.
#include <vector>

#include "backend/torch/rank_executor_state.h"

namespace pipetwin {

// MIGRATE: the layers this pair moves (in layer order), parameters and optimizer state.
std::vector<int> RankExecutor::moved_layers(int32_t source, int32_t target) const {
  std::vector<int> layers;
  for (const LayerMove& move : context_.moves) {
    if (move.source == source && move.target == target) layers.push_back(move.layer);
  }
  return layers;
}

void RankExecutor::send_layers(int32_t i) {
  const Instruction& ins = p_.instructions[i];
  RankModel::Payload payload = model_.export_layers(moved_layers(env_.rank, ins.peer_device));
  std::vector<torch::Tensor> values = {payload.values}, steps = {payload.steps};
  wire_.send(i, values);
  if (payload.steps.numel() > 0) {
    wire_.send(i, steps, /*second=*/true);
  }
  wire_.payload_bytes(i) = payload.values.numel() * static_cast<int64_t>(sizeof(float));
}

void RankExecutor::receive_layers(int32_t i) {
  const Instruction& ins = p_.instructions[i];
  const std::vector<int> layers = moved_layers(ins.peer_device, env_.rank);
  RankModel::Payload payload;
  std::vector<torch::Tensor> values = {torch::empty({model_.payload_values(layers)})};
  wire_.receive(i, values);
  payload.values = values[0];
  std::vector<torch::Tensor> steps = {torch::empty({model_.payload_steps(layers)}, torch::kLong)};
  if (steps[0].numel() > 0) {
    wire_.receive(i, steps, /*second=*/true);
  }
  payload.steps = steps[0];
  model_.import_layers(layers, payload);
  wire_.payload_bytes(i) = payload.values.numel() * static_cast<int64_t>(sizeof(float));
}

}  // namespace pipetwin
