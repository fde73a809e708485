// The class behind execute_on_rank and the state its parts share, declared once for the
// rank_*.cpp files that define them, one concern each. Private to backend/torch: everything
// else sees rank_executor.h.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "backend/common/lane_runner.h"
#include "backend/torch/rank_executor.h"
#include "backend/torch/rank_model.h"
#include "backend/torch/rank_session.h"
#include "backend/torch/real_run.h"
#include "backend/torch/synthetic_task.h"
#include "backend/torch/torch_pch.h"
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
  // What a FWD keeps for the backward: its input leaf and output, until every one of its
  // samples has been through a BWD (a backward cut may differ from the forward cut).
  struct Stash {
    torch::Tensor input, output;
    int32_t rows_left = 0;
    // Asynchronous pipelines: the weight version the forward ran with, kept until its
    // backward (weight stashing).
    std::shared_ptr<torch::nn::Sequential> weights;
    // A split backward: what BWD_INPUT back-propagated from (the output, or on the last
    // stage the loss) and with which gradient, kept with the graph until BWD_WEIGHT.
    torch::Tensor root, root_grad;
  };

  // The rows of `source` (which holds samples [from.lo, from.hi)) for samples `want`.
  static torch::Tensor rows(const torch::Tensor& source, SampleRange from, SampleRange want) {
    return source.slice(0, want.lo - from.lo, want.hi - from.lo);
  }

  int lane_id(Lane lane) const { return env_.rank * kLaneCount + static_cast<int>(lane); }

  // rank_executor.cpp: the op dispatch, with fault injection.
  void perform(int32_t i);

  // rank_compute.cpp: forward, backward, the optimizer step and weight stashing.
  void update(const Instruction& ins);
  torch::nn::Sequential& forward_weights(int32_t stage, Stash& stash);
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

  // rank_transfers.cpp: point-to-point transfers.
  torch::Tensor gather_pieces(int32_t i, Op wanted);
  int tag(int32_t i) const;
  void send(int32_t i);
  torch::Tensor flat_parameters(int32_t stage);
  void receive(int32_t i);

  // rank_migration.cpp: FreezePipe's MIGRATE of layers between ranks.
  std::vector<int> moved_layers(int32_t source, int32_t target) const;
  void send_layers(int32_t i);
  void receive_layers(int32_t i);

  // rank_collectives.cpp: collective groups, the replicas' gradient all-reduce and, with
  // sequence parallelism, the all-reduce of the gradients each tensor-parallel rank
  // computed over its own part of the sequence.
  void join_collective_groups();
  // The sorted devices of instruction i's collective group.
  std::vector<int> group_ranks(int32_t i) const;
  // The ranks among `ranks` that hold this rank's experts (all of them without expert
  // parallelism).
  std::vector<int> expert_holders(const std::vector<int>& ranks) const;
  bool is_tensor_parallel_reduce(int32_t i) const;
  // A collective that ran inside the pass before it: tensor parallelism's ALLREDUCE, and
  // expert parallelism's ALL_TO_ALL (the token exchange of the pass's MoE layers).
  bool ran_inside_pass(int32_t i) const;
  // The instructions whose results instruction i reads: its dependencies, each collective
  // that ran inside a pass standing for that pass (whose consumers the Program makes wait
  // for it), without repeats.
  std::vector<int32_t> inputs_of(int32_t i) const;
  void allreduce(int32_t i);
  void sum_gradients(const std::vector<torch::Tensor>& parameters, c10d::ProcessGroupGloo& group);
  void reduce_sequence_parallel_gradients(int32_t stage);
  const TensorParallelGroup& tensor_parallel() const { return model_.tensor_parallel(); }

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
  bool stash_weights_ = false;  // asynchronous pipelines
  int32_t devices_per_replica_ = 1;
  // Weight stashing, per stage: the copy new forwards use (older ones live in the
  // stashes of their forwards), and how many updates the stage has made.
  std::map<int, std::shared_ptr<torch::nn::Sequential>> current_weights_;
  std::map<int, int32_t> updates_;
  std::vector<std::pair<int32_t, int32_t>> layers_;  // [first, last) of each Program stage
  SyntheticTask task_;
  std::map<int, torch::nn::Sequential> stages_;  // the model's layers, as this Program cuts them
  std::vector<torch::Tensor> produced_;          // FWD: output; BWD: input gradient; RECV: payload
  std::vector<Stash> stash_;                     // FWD: what its backward needs
  std::vector<int64_t> measured_stash_;          // FWD: bytes of its layers' outputs
  std::vector<int64_t> measured_bytes_;          // SEND kinds: bytes of the payload sent (MIGRATE)
  std::vector<int32_t> forward_version_;         // FWD: the stage's updates before it
  std::vector<double> gradient_norms_;           // [interval * layers + layer]
  std::vector<double> losses_;
  ExecutionTimes times_;
  double clock_base_ = 0;  // rank 0's start on this rank's clock
  int32_t crash_at_ = -1;
  std::pair<torch::Tensor, torch::Tensor> data_;
  int data_iteration_ = -1;
};

}  // namespace pipetwin
