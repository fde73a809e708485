// The class behind execute_on_rank: the op dispatch and what each op does, declared once for
// the rank_*.cpp files that define them, one concern each. The state the ops share is held
// by one class per kind: stashes and products (activation_store.h), weight versions
// (weight_stash.h), collective groups and gradient all-reduces (rank_collectives.h), and the
// point-to-point wire (point_to_point.h). Private to backend/torch: everything else sees
// rank_executor.h.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "backend/common/fault_injection.h"
#include "backend/common/lane_runner.h"
#include "backend/torch/activation_store.h"
#include "backend/torch/point_to_point.h"
#include "backend/torch/rank_collectives.h"
#include "backend/torch/rank_executor.h"
#include "backend/torch/rank_model.h"
#include "backend/torch/rank_session.h"
#include "backend/torch/real_run.h"
#include "backend/torch/synthetic_task.h"
#include "backend/torch/torch_pch.h"
#include "backend/torch/weight_stash.h"
#include "backend/torch/zero_shards.h"
#include "backend/torch/zoo_modules.h"

namespace pipetwin {

class RankExecutor : public LaneDevice {
 public:
  RankExecutor(const ResolvedScenario& setup, const Program& program, RankSession& session,
               RankModel& model, const RealRunOptions& options, const ProgramContext& context);

  MeasuredRun run();

  // LaneDevice: runs instruction i on this thread, timed on this rank's clock.
  void execute(int32_t i) override;

 private:
  int lane_id(Lane lane) const { return env_.rank * kLaneCount + static_cast<int>(lane); }

  // rank_executor.cpp: the op dispatch, with fault injection.
  void perform(int32_t i);
  void perform_pass(int32_t i);  // FWD, BWD, BWD_INPUT, BWD_WEIGHT

  // rank_zero.cpp: ZeRO's shards of each stage, their collectives and the passes' part.
  void shard_stages(proto::Optimizer optimizer);
  void reduce_scatter(int32_t i);
  void all_gather(int32_t i);
  void before_pass(const Instruction& ins);
  void after_pass(int32_t i);
  void consolidate_shards();

  // rank_compute.cpp: forward, backward, the optimizer step and weight stashing.
  void update(const Instruction& ins);
  void forward(int32_t i);
  const std::pair<torch::Tensor, torch::Tensor>& data(int iteration);
  std::vector<int32_t> covered_forwards(int32_t i) const;
  void recompute_and_backward(int32_t i);
  void loss_backward(const Instruction& ins, const torch::Tensor& output, bool keep_graph);
  void backward(int32_t i);

  // rank_split_backward.cpp: zero-bubble schedules' BWD_INPUT and BWD_WEIGHT.
  int32_t forward_of_split(int32_t i) const;
  // The stage that reads the data, and the one that computes the loss (DualPipe has two of
  // each, one per direction).
  bool reads_data(int32_t stage) const { return layers_[stage].first == 0; }
  bool computes_loss(int32_t stage) const { return layers_[stage].second == layers_.back().second; }
  void backward_input(int32_t i);
  void backward_weight(int32_t i);

  // rank_transfers.cpp: what point-to-point transfers carry.
  torch::Tensor gather_pieces(int32_t i, Op wanted);
  void send(int32_t i);
  torch::Tensor flat_parameters(int32_t stage);
  void receive(int32_t i);

  // rank_migration.cpp: FreezePipe's MIGRATE of layers between ranks.
  std::vector<int> moved_layers(int32_t source, int32_t target) const;
  void send_layers(int32_t i);
  void receive_layers(int32_t i);

  // rank_results.cpp: gradient norms and the merge of every rank's results.
  void record_gradient_norms(const Instruction& ins);
  MeasuredRun gather(double offset);

  const Program& p_;
  RankSession& session_;
  RankModel& model_;
  RankEnvironment env_;
  RealRunOptions options_;
  ProgramContext context_;
  ZooArchitecture arch_;
  // PipeFB: forward and backward of a stage on two ranks; the backward recomputes.
  bool split_stages_ = false;
  int32_t devices_per_replica_ = 1;
  std::vector<std::pair<int32_t, int32_t>> layers_;  // [first, last) of each Program stage
  SyntheticTask task_;
  std::map<int, torch::nn::Sequential> stages_;  // the model's layers, as this Program cuts them
  // The rank's state, one concern each.
  ActivationStore activations_;  // stashes and products, per instruction
  WeightStash weights_;          // weight versions (asynchronous pipelines)
  RankCollectives collectives_;  // groups and gradient all-reduces
  int32_t zero_stage_ = 0;       // training.zero_stage
  // ZeRO: per stage whose replicas shard it and per kind of parameter (true: the experts'),
  // the shards, and one of their collectives (whose group holds the same parameters; -1 for
  // experts that no other rank holds).
  using ShardedPart = std::pair<int32_t, bool>;
  std::map<ShardedPart, std::unique_ptr<ZeroShards>> zero_;
  std::map<ShardedPart, int32_t> zero_collective_;
  // ZeRO-1: the backwards whose gradients its scatters wait for, the last of each stage's
  // accumulation (where sequence parallelism's replicated gradients are summed first).
  std::set<int32_t> zero_last_backwards_;
  // The parts of stage s that are sharded.
  std::vector<ZeroShards*> shards_of(int32_t s);
  ShardedPart part_of(int32_t collective) const;
  PointToPoint wire_;                   // transfers and their measured bytes
  std::vector<double> gradient_norms_;  // [interval * layers + layer]
  std::vector<double> losses_;
  ExecutionTimes times_;
  double clock_base_ = 0;  // rank 0's start on this rank's clock
  InjectedFault fault_;    // tests only
  std::pair<torch::Tensor, torch::Tensor> data_;
  int data_iteration_ = -1;
};

}  // namespace pipetwin
