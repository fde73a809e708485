// One rank of a real run: builds its stages, then runs its lanes of the Program through
// the shared lane runner (backend/common/lane_runner.h: compute on this thread; send, recv
// and collective on their own threads so that communication overlaps compute, as the
// design's lanes say), recording every instruction's start and end.
#include "backend/torch/rank_executor.h"

#include <csignal>
#include <cstdlib>
#include <exception>
#include <map>
#include <set>

#include "backend/common/measured_times.h"
#include "backend/common/program_lanes.h"
#include "backend/torch/clock_alignment.h"
#include "backend/torch/rank_model.h"
#include "backend/torch/rank_session.h"
#include "backend/torch/real_run.h"
#include "backend/torch/synthetic_task.h"
#include "backend/torch/torch_pch.h"
#include "backend/torch/zoo_modules.h"
#include "sim/build_program.h"
#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

// The rows of `source` (which holds samples [from.lo, from.hi)) for samples `want`.
torch::Tensor rows(const torch::Tensor& source, SampleRange from, SampleRange want) {
  return source.slice(0, want.lo - from.lo, want.hi - from.lo);
}

// What a FWD keeps for the backward: its input leaf and output, until every one of its
// samples has been through a BWD (a backward cut may differ from the forward cut).
struct Stash {
  torch::Tensor input, output;
  int32_t rows_left = 0;
  // Asynchronous pipelines: the weight version the forward ran with, kept until its
  // backward (weight stashing).
  std::shared_ptr<torch::nn::Sequential> weights;
};

}  // namespace

class RankExecutor : public LaneDevice {
 public:
  RankExecutor(const ResolvedScenario& setup, const Program& program, RankSession& session,
               RankModel& model, const RealRunOptions& options, const ProgramContext& context)
      : p_(program),
        session_(session),
        model_(model),
        env_(session.env),
        options_(options),
        context_(context),
        arch_(zoo_architecture(*setup.zoo)),
        split_stages_(setup.schedule.kind == proto::PIPEFB),
        stash_weights_(is_asynchronous(setup.schedule.kind)),
        layers_(chunk_layer_ranges(setup)),
        task_(arch_, setup.training.global_batch, options.seed),
        produced_(program.size()),
        stash_(program.size()),
        measured_stash_(program.size(), 0),
        measured_bytes_(program.size(), 0),
        forward_version_(program.size(), -1) {
    torch::set_num_threads(1);  // ranks share the machine's cores
    // This rank's stages: with replicas and interleaving, whatever the Program puts here.
    for (const Instruction& ins : p_.instructions) {
      if (ins.lane() != Lane::kCompute || ins.device != env_.rank || stages_.count(ins.stage)) {
        continue;
      }
      const int s = ins.stage;
      stages_[s] = model_.stage(layers_[s].first, layers_[s].second);
    }
    // Fault injection for tests: PIPETWIN_CRASH_AT="rank:k" kills that rank just before
    // it runs the k-th instruction of its compute lane.
    if (const char* crash = std::getenv("PIPETWIN_CRASH_AT")) {
      const std::string spec = crash;
      const size_t colon = spec.find(':');
      if (colon != std::string::npos && std::stoi(spec.substr(0, colon)) == env_.rank) {
        crash_at_ = std::stoi(spec.substr(colon + 1));
      }
    }
    losses_.assign(p_.iterations, 0.0);
    if (options_.gradient_interval > 0) {
      const int32_t intervals =
          (p_.iterations + options_.gradient_interval - 1) / options_.gradient_interval;
      gradient_norms_.assign(static_cast<size_t>(intervals) * arch_.layers.size(), 0.0);
    }
    times_.start_s.assign(p_.size(), 0.0);
    times_.end_s.assign(p_.size(), 0.0);
  }

  RealRunResult run() {
    join_collective_groups();
    clock_base_ = session_.clock_base_s;
    // The shared runner: a host thread per lane; an instruction runs once what it waits
    // for on other lanes has finished (this device executes before returning).
    try {
      run_lanes(lane_schedule(p_, env_.rank), *this, options_.timeout_s);
    } catch (const LaneFailure& f) {
      std::string what = f.what();
      if (f.waited_for >= 0) what += " waiting for " + p_.describe(f.waited_for);
      throw RuntimeFailure("rank " + std::to_string(env_.rank) + " failed at " +
                           p_.describe(f.instruction) + ": " + what);
    }
    return gather(session_.clock_offset_s);
  }

  // LaneDevice: runs instruction i on this thread, timed on this rank's clock.
  void execute(int32_t i) override {
    try {
      const double start = steady_now_s();
      perform(i);
      times_.start_s[i] = start - clock_base_;
      times_.end_s[i] = steady_now_s() - clock_base_;
    } catch (const c10::Error& e) {
      throw std::runtime_error(e.what_without_backtrace());  // backtraces are for torch developers
    }
  }

 private:
  int lane_id(Lane lane) const { return env_.rank * kLaneCount + static_cast<int>(lane); }

  // One Gloo group per distinct set of devices a collective of this rank spans, created
  // in Program order, which every member sees the same.
  void join_collective_groups() {
    for (int32_t g = 0; g < p_.num_groups(); ++g) {
      std::vector<int> ranks;
      for (int32_t m : p_.members_of_group(g)) ranks.push_back(p_.instructions[m].device);
      std::sort(ranks.begin(), ranks.end());
      if (std::find(ranks.begin(), ranks.end(), env_.rank) == ranks.end()) continue;
      session_.group(ranks);
    }
  }

  void perform(int32_t i) {
    const Instruction& ins = p_.instructions[i];
    if (ins.lane() == Lane::kCompute && i - p_.lane_begin[lane_id(Lane::kCompute)] == crash_at_) {
      ::raise(SIGKILL);  // fault injection (PIPETWIN_CRASH_AT)
    }
    switch (ins.op) {
      case Op::kFwd:
        return forward(i);
      case Op::kBwd:
        return backward(i);
      case Op::kSendAct:
      case Op::kSendGrad:
      case Op::kSendStash:
      case Op::kSendWeights:
      case Op::kMigrate:
        return send(i);
      case Op::kRecvAct:
      case Op::kRecvGrad:
      case Op::kRecvStash:
      case Op::kRecvWeights:
      case Op::kMigrateRecv:
        return receive(i);
      case Op::kOptim:
        return update(ins);
      case Op::kAllreduce:
        return allreduce(i);
      default:  // real_run_unsupported turns these schedules away first
        throw RuntimeFailure(std::string("the LibTorch backend does not run ") + op_name(ins.op));
    }
  }

  // With weight stashing, the next forward takes a copy of the updated weights.
  void update(const Instruction& ins) {
    const auto [first, last] = layers_[ins.stage];
    current_weights_.erase(ins.stage);
    record_gradient_norms(ins);
    model_.step(first, last);
    ++updates_[ins.stage];
  }

  // The weights a forward of `stage` runs with: the stage's own, or with weight
  // stashing a copy of the current version that the forward's stash keeps alive.
  torch::nn::Sequential& forward_weights(int32_t stage, Stash& stash) {
    if (!stash_weights_) return stages_.at(stage);
    auto& current = current_weights_[stage];
    if (!current) {
      current = std::make_shared<torch::nn::Sequential>(
          model_.snapshot(layers_[stage].first, layers_[stage].second));
    }
    stash.weights = current;
    return *current;
  }

  // AutoFreeze's statistic: each layer's gradient L1 norm, summed over the interval. Only
  // replica 0 counts (after ALLREDUCE the replicas' gradients are the same).
  void record_gradient_norms(const Instruction& ins) {
    const int32_t interval = options_.gradient_interval;
    if (interval <= 0 || ins.range.lo != 0) return;
    const int32_t k = ins.iteration / interval;
    const auto [first, last] = layers_[ins.stage];
    const int layers = static_cast<int>(arch_.layers.size());
    for (int l = first; l < last; ++l) {
      double norm = 0;
      for (const auto& p : (*stages_.at(ins.stage))[l - first]->parameters()) {
        if (p.grad().defined()) norm += p.grad().abs().sum().item<double>();
      }
      gradient_norms_[static_cast<size_t>(k) * layers + l] += norm;
    }
  }

  // Concatenates, in sample order, the pieces a compute instruction received or got
  // from a producer on this device.
  torch::Tensor gather_pieces(int32_t i, Op wanted) {
    std::vector<std::pair<int32_t, torch::Tensor>> pieces;
    const Instruction& ins = p_.instructions[i];
    const SampleRange mine = ins.range;
    // A neighbouring stage on this same device hands its result over without a transfer.
    const Op local_op = wanted == Op::kRecvAct ? Op::kFwd : Op::kBwd;
    const int32_t local_stage = wanted == Op::kRecvAct ? ins.stage - 1 : ins.stage + 1;
    for (int32_t d : p_.deps_of(i)) {
      const Instruction& dep = p_.instructions[d];
      if (dep.op == wanted) {
        pieces.emplace_back(dep.range.lo, produced_[d]);
      } else if (dep.op == local_op && dep.stage == local_stage) {
        const SampleRange piece = dep.range.intersect(mine);
        pieces.emplace_back(piece.lo, rows(produced_[d], dep.range, piece));
      }
    }
    std::sort(pieces.begin(), pieces.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<torch::Tensor> tensors;
    for (auto& [lo, t] : pieces) tensors.push_back(t);
    return tensors.size() == 1 ? tensors[0] : torch::cat(tensors, 0);
  }

  void forward(int32_t i) {
    const Instruction& ins = p_.instructions[i];
    torch::Tensor input = ins.stage == 0
                              ? rows(data(ins.iteration).first, {0, p_.global_batch}, ins.range)
                              : gather_pieces(i, Op::kRecvAct);
    // No gradient is wanted for the input when everything upstream is frozen.
    const bool upstream_trains = layers_[ins.stage].first > model_.frozen();
    input = input.detach().requires_grad_(ins.stage > 0 && !split_stages_ && upstream_trains);
    Stash& stash = stash_[i];
    stash.input = input;
    forward_version_[i] = updates_[ins.stage];
    torch::nn::Sequential& weights = forward_weights(ins.stage, stash);
    if (split_stages_) {  // the backward rank recomputes: nothing to record here
      const torch::NoGradGuard no_grad;
      produced_[i] = stages_.at(ins.stage)->forward(input);
      measured_stash_[i] = input.numel() * static_cast<int64_t>(input.element_size());
      return;
    }
    // Layer by layer, to count the activations the backward keeps: each layer's output
    // (a frozen prefix's outputs need no gradient, so autograd keeps nothing for them).
    torch::Tensor x = input;
    int64_t kept = 0;
    for (auto& layer : *weights) {
      x = layer.forward(x);
      if (x.requires_grad()) kept += x.numel() * static_cast<int64_t>(x.element_size());
    }
    measured_stash_[i] = kept;
    stash.output = x;
    stash.rows_left = ins.range.size();
    produced_[i] = stash.output;
  }

  // An iteration's minibatch, made once (by the first FWD or loss that needs it) and kept
  // until the next iteration's, so that microbatches only slice it.
  const std::pair<torch::Tensor, torch::Tensor>& data(int iteration) {
    if (data_iteration_ != iteration) {
      // The run's iteration, not the Program's: a phase continues the run's data.
      const int run_iteration = context_.first_iteration + iteration;
      data_ = {task_.inputs(run_iteration), task_.targets(run_iteration)};
      data_iteration_ = iteration;
    }
    return data_;
  }

  // The FWDs of the same stage whose samples this BWD covers, in sample order.
  std::vector<int32_t> covered_forwards(int32_t i) const {
    const Instruction& ins = p_.instructions[i];
    std::vector<int32_t> forwards;
    for (int32_t d : p_.deps_of(i)) {
      const Instruction& dep = p_.instructions[d];
      if (dep.op == Op::kFwd && dep.stage == ins.stage &&
          dep.range.intersect(ins.range).size() > 0) {
        forwards.push_back(d);
      }
    }
    std::sort(forwards.begin(), forwards.end(), [&](int32_t a, int32_t b) {
      return p_.instructions[a].range.lo < p_.instructions[b].range.lo;
    });
    if (forwards.empty()) throw RuntimeFailure(p_.describe(i) + " has no forward of its samples");
    return forwards;
  }

  // Backward of samples `range` through the graphs their forwards built. A forward cut
  // in two by the backward cut is back-propagated once per piece (autograd cannot split
  // a graph), keeping its graph until the last piece.
  // PipeFB: the stage's input came from its forward rank; run the forward again with
  // autograd, then the backward.
  void recompute_and_backward(int32_t i) {
    const Instruction& ins = p_.instructions[i];
    int32_t handed = -1;
    for (int32_t d : p_.deps_of(i)) {
      if (p_.instructions[d].op == Op::kRecvStash) handed = d;
    }
    const bool float_input = produced_[handed].is_floating_point();
    const torch::Tensor input = produced_[handed].detach().requires_grad_(float_input);
    const torch::Tensor output = stages_.at(ins.stage)->forward(input);
    if (ins.stage == p_.num_stages - 1) {
      loss_backward(ins, output, /*keep_graph=*/false);
    } else {
      output.backward(gather_pieces(i, Op::kRecvGrad));
    }
    if (ins.stage > 0) produced_[i] = input.grad().detach();
    produced_[handed] = torch::Tensor();
  }

  // The last stage: the loss of samples `ins.range` from their outputs, back-propagated.
  // Mean over the minibatch: each microbatch weighs by its share of samples.
  void loss_backward(const Instruction& ins, const torch::Tensor& output, bool keep_graph) {
    const torch::Tensor target = rows(data(ins.iteration).second, {0, p_.global_batch}, ins.range);
    const double share = static_cast<double>(ins.range.size()) / p_.global_batch;
    const torch::Tensor loss = zoo_loss(arch_, output, target) * share;
    losses_[ins.iteration] += loss.item<double>();
    loss.backward({}, keep_graph);
  }

  void backward(int32_t i) {
    if (split_stages_) return recompute_and_backward(i);
    const Instruction& ins = p_.instructions[i];
    const std::vector<int32_t> forwards = covered_forwards(i);
    std::vector<torch::Tensor> outputs;
    bool keep_graph = false;
    for (int32_t f : forwards) {
      const SampleRange piece = p_.instructions[f].range.intersect(ins.range);
      outputs.push_back(rows(stash_[f].output, p_.instructions[f].range, piece));
      keep_graph |= stash_[f].rows_left > piece.size();
    }
    if (ins.stage == p_.num_stages - 1) {
      loss_backward(ins, outputs.size() == 1 ? outputs[0] : torch::cat(outputs, 0), keep_graph);
    } else if (!outputs[0].requires_grad()) {
      // A frozen stage: nothing here or upstream trains, the gradient is a bare token.
    } else {
      const torch::Tensor grad = gather_pieces(i, Op::kRecvGrad);
      std::vector<torch::Tensor> grads;
      for (int32_t f : forwards) {
        const SampleRange piece = p_.instructions[f].range.intersect(ins.range);
        grads.push_back(rows(grad, ins.range, piece));
      }
      torch::autograd::backward(outputs, grads, keep_graph);
    }
    std::vector<torch::Tensor> input_grads;
    for (int32_t f : forwards) {
      Stash& stash = stash_[f];
      if (stash.weights) {  // computed on a stashed version; the update applies it to the latest
        model_.add_gradients_of(*stash.weights, layers_[ins.stage].first,
                                layers_[ins.stage].second);
      }
      const SampleRange piece = p_.instructions[f].range.intersect(ins.range);
      if (ins.stage > 0 && !stash.input.requires_grad()) {
        input_grads.push_back(torch::empty({0}));  // nothing upstream wants it
      } else if (ins.stage > 0) {
        // Samples are independent, so the rows outside this piece got no gradient. The
        // gradient is detached from the input, so the next piece of the same forward
        // accumulates into a fresh tensor and this view needs no copy.
        input_grads.push_back(rows(stash.input.grad(), p_.instructions[f].range, piece));
        stash.input.mutable_grad() = torch::Tensor();
      }
      stash.rows_left -= piece.size();
      if (stash.rows_left == 0) {  // released; its sends are done, since a gradient came back
        stash = Stash{};
        produced_[f] = torch::Tensor();
      }
    }
    if (ins.stage > 0) {
      produced_[i] = input_grads.size() == 1 ? input_grads[0] : torch::cat(input_grads, 0);
      if (produced_[i].numel() == 0) produced_[i] = torch::empty({0});
    }
  }

  // Data parallelism: the stage's gradients summed across its replicas. Every replica's
  // loss is already weighted by its share of the global minibatch, so the sum is the
  // gradient of the mean.
  void allreduce(int32_t i) {
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

  // The tag of a pair: its SEND's index, which both ranks compute from the same Program.
  int tag(int32_t i) const { return is_send(p_.instructions[i].op) ? i : p_.partner[i]; }

  void send(int32_t i) {
    const Instruction& ins = p_.instructions[i];
    int32_t producer = -1;
    for (int32_t d : p_.deps_of(i)) producer = d;
    const Instruction& from = p_.instructions[producer];
    if (ins.op == Op::kMigrate) return send_layers(i);
    std::vector<torch::Tensor> payload;
    if (ins.bytes == 0 && ins.op == Op::kSendGrad) {
      payload = {torch::empty({0})};  // into a frozen stage: a token
    } else if (ins.op == Op::kSendWeights) {
      payload = {flat_parameters(ins.stage)};
    } else if (ins.op == Op::kSendStash) {
      payload = {rows(stash_[producer].input, from.range, ins.range).detach().contiguous()};
    } else {
      payload = {rows(produced_[producer], from.range, ins.range).detach().contiguous()};
    }
    session_.job.world->send(payload, ins.peer_device, tag(i))->wait();
    if (ins.op == Op::kSendStash) stash_[producer] = Stash{};  // it has left
  }

  torch::Tensor flat_parameters(int32_t stage) {
    std::vector<torch::Tensor> flat;
    for (const auto& p : stages_.at(stage)->parameters()) flat.push_back(p.detach().flatten());
    return flat.empty() ? torch::zeros({1}) : torch::cat(flat);
  }

  void receive(int32_t i) {
    const Instruction& ins = p_.instructions[i];
    if (ins.op == Op::kMigrateRecv) return receive_layers(i);
    if (ins.op == Op::kRecvGrad && ins.bytes == 0) {
      std::vector<torch::Tensor> token = {torch::empty({0})};
      session_.job.world->recv(token, ins.peer_device, tag(i))->wait();
      produced_[i] = token[0];
      return;
    }
    if (ins.op == Op::kRecvWeights) {  // the backward rank's updated weights
      int64_t count = 0;
      for (const auto& p : stages_.at(ins.stage)->parameters()) count += p.numel();
      std::vector<torch::Tensor> buffer = {torch::empty({std::max<int64_t>(count, 1)})};
      session_.job.world->recv(buffer, ins.peer_device, tag(i))->wait();
      const torch::NoGradGuard no_grad;
      int64_t offset = 0;
      for (auto& p : stages_.at(ins.stage)->parameters()) {
        p.copy_(buffer[0].slice(0, offset, offset + p.numel()).view_as(p));
        offset += p.numel();
      }
      return;
    }
    // Activations and handed-over inputs enter this stage's first layer; gradients leave
    // its last one. Stage 0's input may be token ids.
    const auto [first, last] = layers_[ins.stage];
    std::vector<int64_t> shape = {ins.range.size()};
    for (int64_t d : arch_.boundary_shapes[ins.op == Op::kRecvGrad ? last : first]) {
      shape.push_back(d);
    }
    const bool tokens = first == 0 && arch_.input_vocab > 0 && ins.op != Op::kRecvGrad;
    std::vector<torch::Tensor> buffer = {
        torch::empty(shape, tokens ? torch::kLong : torch::kFloat)};
    session_.job.world->recv(buffer, ins.peer_device, tag(i))->wait();
    produced_[i] = buffer[0];
  }

  // MIGRATE: the layers this pair moves (in layer order), parameters and optimizer state.
  std::vector<int> moved_layers(int32_t source, int32_t target) const {
    std::vector<int> layers;
    for (const LayerMove& move : context_.moves) {
      if (move.source == source && move.target == target) layers.push_back(move.layer);
    }
    return layers;
  }

  void send_layers(int32_t i) {
    const Instruction& ins = p_.instructions[i];
    RankModel::Payload payload = model_.export_layers(moved_layers(env_.rank, ins.peer_device));
    std::vector<torch::Tensor> values = {payload.values}, steps = {payload.steps};
    session_.job.world->send(values, ins.peer_device, tag(i))->wait();
    if (payload.steps.numel() > 0) {
      session_.job.world->send(steps, ins.peer_device, tag(i) + p_.size())->wait();
    }
    measured_bytes_[i] = payload.values.numel() * static_cast<int64_t>(sizeof(float));
  }

  void receive_layers(int32_t i) {
    const Instruction& ins = p_.instructions[i];
    const std::vector<int> layers = moved_layers(ins.peer_device, env_.rank);
    RankModel::Payload payload;
    std::vector<torch::Tensor> values = {torch::empty({model_.payload_values(layers)})};
    session_.job.world->recv(values, ins.peer_device, tag(i))->wait();
    payload.values = values[0];
    std::vector<torch::Tensor> steps = {torch::empty({model_.payload_steps(layers)}, torch::kLong)};
    if (steps[0].numel() > 0) {
      session_.job.world->recv(steps, ins.peer_device, tag(i) + p_.size())->wait();
    }
    payload.steps = steps[0];
    model_.import_layers(layers, payload);
    measured_bytes_[i] = payload.values.numel() * static_cast<int64_t>(sizeof(float));
  }

  // One all-reduce of every rank's share: each slot is written by one rank (or, for
  // losses, summed over the replicas' last stages).
  RealRunResult gather(double offset) {
    const int64_t n = p_.size();
    const int layers = static_cast<int>(arch_.layers.size());
    const int64_t norms = static_cast<int64_t>(gradient_norms_.size());
    const int64_t starts = 0, ends = n, stashes = 2 * n, payloads = 3 * n, versions = 4 * n;
    const int64_t losses = 5 * n;
    const int64_t weights = losses + p_.iterations, norm_slots = weights + layers;
    torch::Tensor all = torch::zeros({norm_slots + norms}, torch::kFloat64);
    auto data = all.accessor<double, 1>();
    for (int32_t i = 0; i < n; ++i) {
      if (p_.instructions[i].device != env_.rank) continue;
      data[starts + i] = times_.start_s[i];
      data[ends + i] = times_.end_s[i];
      data[stashes + i] = static_cast<double>(measured_stash_[i]);
      data[versions + i] = forward_version_[i] + 1;  // 0: not a FWD
      if (is_send(p_.instructions[i].op))
        data[payloads + i] = static_cast<double>(measured_bytes_[i]);
    }
    for (int64_t k = 0; k < norms; ++k) data[norm_slots + k] = gradient_norms_[k];
    // Every replica's last stage holds its share of each iteration's loss.
    for (int it = 0; it < p_.iterations; ++it) data[losses + it] = losses_[it];
    for (auto& [s, stage] : stages_) {
      if (p_.stage_device[s] != env_.rank) continue;  // replica 0's weights stand for all
      for (int l = layers_[s].first; l < layers_[s].second; ++l) {
        data[weights + l] = parameter_sum(*stage[l - layers_[s].first]);
      }
    }
    std::vector<torch::Tensor> buffer = {all};
    session_.job.world->allreduce(buffer)->wait();
    RealRunResult result;
    result.clock_offset_s = offset;
    const double* merged = buffer[0].data_ptr<double>();
    result.times.start_s.assign(merged, merged + n);
    result.times.end_s.assign(merged + n, merged + 2 * n);
    pair_transfer_times(p_, result.times);
    result.losses.assign(merged + losses, merged + losses + p_.iterations);
    result.weights.assign(merged + weights, merged + weights + layers);
    for (int32_t i = 0; i < n; ++i) {
      result.stash_bytes.push_back(std::llround(merged[stashes + i]));
      result.payload_bytes.push_back(std::llround(merged[payloads + i]));
      result.forward_versions.push_back(static_cast<int32_t>(std::llround(merged[versions + i])) -
                                        1);
    }
    for (int64_t k = 0; k * layers < norms; ++k) {
      result.gradient_norms.emplace_back(merged + norm_slots + k * layers,
                                         merged + norm_slots + (k + 1) * layers);
    }
    return result;
  }

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
  // Weight stashing, per stage: the copy new forwards use (older ones live in the
  // stashes of their forwards), and how many updates the stage has made.
  std::map<int, std::shared_ptr<torch::nn::Sequential>> current_weights_;
  std::map<int, int32_t> updates_;
  std::vector<std::pair<int32_t, int32_t>> layers_;  // [first, last) of each stage
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

RealRunResult execute_on_rank(const ResolvedScenario& setup, const Program& program,
                              RankSession& session, RankModel& model, const RealRunOptions& options,
                              const ProgramContext& context) {
  RankExecutor executor(setup, program, session, model, options, context);
  return executor.run();
}

Program with_measured_stash(const Program& program, const RealRunResult& run) {
  Program measured = program;
  // Per stage, bytes per sample as measured; a BWD frees its own samples' share.
  std::map<int32_t, double> per_sample;
  for (int32_t i = 0; i < program.size(); ++i) {
    const Instruction& ins = program.instructions[i];
    if (ins.op != Op::kFwd) continue;
    measured.instructions[i].stash_bytes = run.stash_bytes[i];
    per_sample[ins.stage] = static_cast<double>(run.stash_bytes[i]) / ins.range.size();
  }
  for (Instruction& ins : measured.instructions) {
    if (ins.op == Op::kBwd)
      ins.stash_bytes = std::llround(per_sample[ins.stage] * ins.range.size());
  }
  return measured;
}

std::string real_run_unsupported(const ResolvedScenario& setup, const Program& program) {
  if (!setup.zoo) {
    return "the LibTorch backend builds zoo models (model.zoo); explicit layers and profiles "
           "have no architecture to run";
  }
  if (setup.schedule.kind == proto::PIPEFB && !setup.schedule.pipefb_recompute) {
    // A backward in another process cannot walk the forward's autograd graph.
    return "PIPEFB on real ranks hands the stage's input to the backward rank, which "
           "recomputes the forward: set schedule.pipefb_recompute: true";
  }
  if (is_asynchronous(setup.schedule.kind) && setup.freeze.enabled) {
    return "asynchronous pipelines on real ranks do not freeze layers (freeze)";
  }
  if (setup.schedule.offload.enabled) {
    // LibTorch 1.13's C++ API has no saved-tensor hooks, so the tensors autograd keeps
    // cannot be moved out and back; copying them would leave the originals in place.
    return "the LibTorch backend cannot offload autograd's saved activations (schedule.offload); "
           "simulate offload with pipetwin simulate";
  }
  return "";
}

RealRunResult run_as_rank(const ResolvedScenario& setup, const Program& program,
                          const RankEnvironment& env, const RealRunOptions& options) {
  if (env.world_size != program.num_devices) {
    throw InputError("WORLD_SIZE=" + std::to_string(env.world_size) + " but the schedule needs " +
                     std::to_string(program.num_devices) + " ranks (one per pipeline device)");
  }
  RankSession session = open_session(env, options.timeout_s);
  RankModel model(zoo_architecture(*setup.zoo), setup.training.optimizer, options.seed);
  return execute_on_rank(setup, program, session, model, options, ProgramContext{});
}

}  // namespace pipetwin
