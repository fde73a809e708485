// Weight stashing (PipeDream; asynchronous pipelines): a forward runs with the weights
// current when it starts and its backward with the same version, while updates go on.
// Per stage: the copy new forwards use (older copies live in the stashes of their
// forwards) and how many updates the stage has made; per FWD, the version it ran with.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "backend/torch/rank_model.h"
#include "backend/torch/torch_pch.h"

namespace pipetwin {

class WeightStash {
 public:
  // Without `enabled`, forwards run with the stage's own weights; versions are still
  // counted.
  WeightStash(bool enabled, RankModel& model, int32_t instructions)
      : enabled_(enabled), model_(model), forward_version_(instructions, -1) {}

  // The weights forward i of `stage` (layers [first, last)) runs with: `own`, or a copy
  // of the current version that `keep` holds on to until the backward.
  torch::nn::Sequential& for_forward(int32_t i, int32_t stage, std::pair<int32_t, int32_t> layers,
                                     torch::nn::Sequential& own,
                                     std::shared_ptr<torch::nn::Sequential>& keep) {
    forward_version_[i] = updates_[stage];
    if (!enabled_) return own;
    auto& current = current_[stage];
    if (!current) {
      current =
          std::make_shared<torch::nn::Sequential>(model_.snapshot(layers.first, layers.second));
    }
    keep = current;
    return *current;
  }

  // The stage's OPTIM: the next forward takes a copy of the updated weights.
  void updated(int32_t stage) {
    current_.erase(stage);
    ++updates_[stage];
  }

  // The updates forward i's stage had made before it (-1: not a FWD).
  int32_t version_of(int32_t i) const { return forward_version_[i]; }

 private:
  bool enabled_;
  RankModel& model_;
  std::map<int32_t, std::shared_ptr<torch::nn::Sequential>> current_;
  std::map<int32_t, int32_t> updates_;
  std::vector<int32_t> forward_version_;
};

}  // namespace pipetwin
