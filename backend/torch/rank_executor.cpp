// One rank of a real run: builds its stages, then runs its lanes of the Program (compute
// on this thread, send and recv on their own threads so that communication overlaps
// compute, as the design's lanes say), recording every instruction's start and end.
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <exception>
#include <map>
#include <mutex>
#include <thread>

#include "backend/torch/gloo_group.h"
#include "backend/torch/optimizers.h"
#include "backend/torch/real_run.h"
#include "backend/torch/synthetic_task.h"
#include "backend/torch/torch_pch.h"
#include "backend/torch/zoo_modules.h"
#include "sim/errors.h"
#include "sim/schedule/build_program.h"

namespace pipetwin {
namespace {

using Clock = std::chrono::steady_clock;

double now_s() { return std::chrono::duration<double>(Clock::now().time_since_epoch()).count(); }

// Layer ranges of each pipeline stage, as the scheduler placed them.
std::vector<std::pair<int, int>> stage_layers(const ResolvedScenario& setup) {
  std::vector<std::pair<int, int>> ranges;
  int first = 0;
  for (int count : place_layers(setup)) {
    ranges.emplace_back(first, first + count);
    first += count;
  }
  return ranges;
}

// Sum of each layer's parameters: a fingerprint of the trained weights.
double parameter_sum(torch::nn::Module& layer) {
  double sum = 0;
  for (const auto& p : layer.parameters()) sum += p.sum().item<double>();
  return sum;
}

class RankExecutor {
 public:
  RankExecutor(const ResolvedScenario& setup, const Program& program, const RankEnvironment& env,
               const RealRunOptions& options)
      : setup_(setup),
        p_(program),
        env_(env),
        options_(options),
        layers_(stage_layers(setup)),
        task_(zoo_sample_shape(*setup.zoo, 0),
              zoo_sample_shape(*setup.zoo, zoo_layer_count(*setup.zoo)),
              setup.training.global_batch, options.seed),
        produced_(program.size()),
        inputs_(program.size()),
        done_(program.size(), 0) {
    torch::set_num_threads(1);  // ranks share the machine's cores
    for (int s = 0; s < p_.num_stages; ++s) {
      if (p_.stage_device[s] != env_.rank) continue;
      stages_[s] = zoo_layers(*setup.zoo, layers_[s].first, layers_[s].second, options.seed);
      optimizers_[s] = make_optimizer(setup.training.optimizer, stages_[s]->parameters());
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
    times_.start_s.assign(p_.size(), 0.0);
    times_.end_s.assign(p_.size(), 0.0);
  }

  RealRunResult run() {
    pg_ = connect(env_, options_.timeout_s);
    const double offset = measure_clock_offset();
    // Every rank counts from rank 0's start, converted to its own clock.
    clock_base_ = rank0_clock_now() - offset;

    std::thread send([this] { run_lane(Lane::kSend); });
    std::thread recv([this] { run_lane(Lane::kRecv); });
    run_lane(Lane::kCompute);
    send.join();
    recv.join();
    if (failure_) std::rethrow_exception(failure_);
    return gather(offset);
  }

 private:
  int lane_id(Lane lane) const { return env_.rank * kLaneCount + static_cast<int>(lane); }

  void run_lane(Lane lane) {
    const int l = lane_id(lane);
    for (int32_t i = p_.lane_begin[l]; i < p_.lane_begin[l + 1]; ++i) {
      try {
        wait_for_dependencies(i);
        if (failure_) return;
        const double start = now_s();
        execute(i);
        times_.start_s[i] = start - clock_base_;
        times_.end_s[i] = now_s() - clock_base_;
        mark_done(i);
      } catch (...) {
        fail(i, std::current_exception());
        return;
      }
    }
  }

  void wait_for_dependencies(int32_t i) {
    std::unique_lock<std::mutex> lock(mutex_);
    const auto deadline = Clock::now() + std::chrono::duration<double>(options_.timeout_s);
    for (int32_t d : p_.deps_of(i)) {
      if (!wakeup_.wait_until(lock, deadline, [&] { return done_[d] || failure_ != nullptr; })) {
        throw RuntimeFailure("timed out after " + std::to_string(options_.timeout_s) +
                             " s waiting for " + p_.describe(d));
      }
    }
  }

  void mark_done(int32_t i) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_[i] = 1;
    }
    wakeup_.notify_all();
  }

  void fail(int32_t i, std::exception_ptr error) {
    std::string what;
    try {
      std::rethrow_exception(error);
    } catch (const c10::Error& e) {
      what = e.what_without_backtrace();  // torch's backtraces are for torch developers
    } catch (const std::exception& e) {
      what = e.what();
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!failure_) {
        failure_ = std::make_exception_ptr(RuntimeFailure(
            "rank " + std::to_string(env_.rank) + " failed at " + p_.describe(i) + ": " + what));
      }
    }
    wakeup_.notify_all();
  }

  void execute(int32_t i) {
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
        return send(i);
      case Op::kRecvAct:
      case Op::kRecvGrad:
        return receive(i);
      case Op::kOptim:
        optimizers_.at(ins.stage)->step();
        optimizers_.at(ins.stage)->zero_grad();
        return;
      case Op::kAllreduce:
        throw RuntimeFailure("ALLREDUCE is not supported by the LibTorch backend yet");
    }
  }

  // The rows of `source` (which holds samples [from.lo, from.hi)) for samples `want`.
  static torch::Tensor rows(const torch::Tensor& source, SampleRange from, SampleRange want) {
    return source.slice(0, want.lo - from.lo, want.hi - from.lo);
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
    input = input.detach().requires_grad_(ins.stage > 0);
    inputs_[i] = input;
    produced_[i] = stages_.at(ins.stage)->forward(input);
  }

  // An iteration's minibatch, made once (by the first FWD or loss that needs it) and kept
  // until the next iteration's, so that microbatches only slice it.
  const std::pair<torch::Tensor, torch::Tensor>& data(int iteration) {
    if (data_iteration_ != iteration) {
      data_ = {task_.inputs(iteration), task_.targets(iteration)};
      data_iteration_ = iteration;
    }
    return data_;
  }

  // The FWD of the same stage and samples: backward ranges equal forward ranges here.
  int32_t matching_forward(int32_t i) const {
    const Instruction& ins = p_.instructions[i];
    for (int32_t d : p_.deps_of(i)) {
      const Instruction& dep = p_.instructions[d];
      if (dep.op == Op::kFwd && dep.stage == ins.stage && dep.range == ins.range) return d;
    }
    throw RuntimeFailure(p_.describe(i) + " has no forward of the same samples");
  }

  void backward(int32_t i) {
    const Instruction& ins = p_.instructions[i];
    const int32_t f = matching_forward(i);
    const torch::Tensor& output = produced_[f];
    if (ins.stage == p_.num_stages - 1) {
      const torch::Tensor target =
          rows(data(ins.iteration).second, {0, p_.global_batch}, ins.range);
      // Mean over the minibatch: each microbatch weighs by its share of samples.
      const double share = static_cast<double>(ins.range.size()) / p_.global_batch;
      const torch::Tensor loss = torch::mse_loss(output, target) * share;
      losses_[ins.iteration] += loss.item<double>();
      loss.backward();
    } else {
      output.backward(gather_pieces(i, Op::kRecvGrad));
    }
    if (ins.stage > 0) produced_[i] = inputs_[f].grad().detach();
    produced_[f] = torch::Tensor();  // the stash is released
    inputs_[f] = torch::Tensor();
  }

  // The tag of a pair: its SEND's index, which both ranks compute from the same Program.
  int tag(int32_t i) const { return is_send(p_.instructions[i].op) ? i : p_.partner[i]; }

  void send(int32_t i) {
    const Instruction& ins = p_.instructions[i];
    int32_t producer = -1;
    for (int32_t d : p_.deps_of(i)) producer = d;
    const Instruction& from = p_.instructions[producer];
    std::vector<torch::Tensor> payload = {
        rows(produced_[producer], from.range, ins.range).detach().contiguous()};
    pg_->send(payload, ins.peer_device, tag(i))->wait();
  }

  void receive(int32_t i) {
    const Instruction& ins = p_.instructions[i];
    // Activations enter this stage's first layer; gradients leave its last one.
    const auto [first, last] = layers_[ins.stage];
    std::vector<int64_t> shape = {ins.range.size()};
    for (int64_t d : zoo_sample_shape(*setup_.zoo, ins.op == Op::kRecvAct ? first : last)) {
      shape.push_back(d);
    }
    std::vector<torch::Tensor> buffer = {torch::empty(shape)};
    pg_->recv(buffer, ins.peer_device, tag(i))->wait();
    produced_[i] = buffer[0];
  }

  // NTP-style: rank 0 and each other rank exchange timestamps a few times; the exchange
  // with the shortest round trip gives the offset (rank 0's clock minus this rank's).
  double measure_clock_offset() {
    double offset = 0;
    for (int r = 1; r < env_.world_size; ++r) {
      if (env_.rank != 0 && env_.rank != r) continue;
      double best_rtt = 1e30;
      for (int k = 0; k < 5; ++k) {
        std::vector<torch::Tensor> t = {torch::zeros({3}, torch::kFloat64)};
        // Instruction tags are SEND indices: these come after them.
        const int tag_base = p_.size() + 16 * r + 2 * k;
        if (env_.rank == r) {
          const double t1 = now_s();
          t[0][0] = t1;
          pg_->send(t, 0, tag_base)->wait();
          pg_->recv(t, 0, tag_base + 1)->wait();
          const double t4 = now_s();
          const double t2 = t[0][1].item<double>(), t3 = t[0][2].item<double>();
          if (t4 - t1 < best_rtt) {
            best_rtt = t4 - t1;
            offset = ((t2 - t1) + (t3 - t4)) / 2;
          }
        } else {
          pg_->recv(t, r, tag_base)->wait();
          t[0][1] = now_s();
          t[0][2] = now_s();
          pg_->send(t, r, tag_base + 1)->wait();
        }
      }
    }
    return offset;
  }

  // Rank 0's clock, as rank 0 broadcasts it (the broadcast also lines the ranks up).
  double rank0_clock_now() {
    std::vector<torch::Tensor> clock = {
        torch::full({1}, env_.rank == 0 ? now_s() : 0.0, torch::kFloat64)};
    pg_->broadcast(clock)->wait();
    return clock[0].item<double>();
  }

  RealRunResult gather(double offset) {
    const int64_t n = p_.size();
    const int layers = zoo_layer_count(*setup_.zoo);
    torch::Tensor all = torch::zeros({2 * n + p_.iterations + layers}, torch::kFloat64);
    auto data = all.accessor<double, 1>();
    for (int32_t i = 0; i < n; ++i) {
      if (p_.instructions[i].device != env_.rank) continue;
      data[i] = times_.start_s[i];
      data[n + i] = times_.end_s[i];
    }
    if (p_.stage_device[p_.num_stages - 1] == env_.rank) {
      for (int it = 0; it < p_.iterations; ++it) data[2 * n + it] = losses_[it];
    }
    for (auto& [s, stage] : stages_) {
      for (int l = layers_[s].first; l < layers_[s].second; ++l) {
        data[2 * n + p_.iterations + l] = parameter_sum(*stage[l - layers_[s].first]);
      }
    }
    std::vector<torch::Tensor> buffer = {all};
    pg_->allreduce(buffer)->wait();
    RealRunResult result;
    result.clock_offset_s = offset;
    const double* merged = buffer[0].data_ptr<double>();
    result.times.start_s.assign(merged, merged + n);
    result.times.end_s.assign(merged + n, merged + 2 * n);
    // A transfer is a rendezvous: it starts when both ends have been posted and ends when
    // the data has arrived. Each rank saw only its own end, so both ends get the pair's
    // start and end, as the simulators record them (a RECV posted early waits; that wait
    // is idle time, not transfer time).
    for (int32_t i = 0; i < n; ++i) {
      const int32_t j = p_.partner[i];
      if (j < 0 || !is_send(p_.instructions[i].op)) continue;
      // j is the RECV: its end is when the data was there. (The SEND may return later,
      // when the transport acknowledges; and clock offsets are only estimates.)
      const double end = result.times.end_s[j];
      const double start =
          std::min(end, std::max(result.times.start_s[i], result.times.start_s[j]));
      result.times.start_s[i] = result.times.start_s[j] = start;
      result.times.end_s[i] = result.times.end_s[j] = end;
    }
    result.losses.assign(merged + 2 * n, merged + 2 * n + p_.iterations);
    result.weights.assign(merged + 2 * n + p_.iterations, merged + 2 * n + p_.iterations + layers);
    return result;
  }

  const ResolvedScenario& setup_;
  const Program& p_;
  RankEnvironment env_;
  RealRunOptions options_;
  std::vector<std::pair<int, int>> layers_;
  SyntheticTask task_;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> pg_;
  std::map<int, torch::nn::Sequential> stages_;
  std::map<int, std::unique_ptr<torch::optim::Optimizer>> optimizers_;
  std::vector<torch::Tensor> produced_;  // FWD: output; BWD: input gradient; RECV: payload
  std::vector<torch::Tensor> inputs_;    // FWD: its input leaf
  std::vector<char> done_;
  std::vector<double> losses_;
  ExecutionTimes times_;
  double clock_base_ = 0;  // rank 0's start on this rank's clock
  std::mutex mutex_;
  std::condition_variable wakeup_;
  std::exception_ptr failure_;
  int32_t crash_at_ = -1;
  std::pair<torch::Tensor, torch::Tensor> data_;
  int data_iteration_ = -1;
};

}  // namespace

std::string real_run_unsupported(const ResolvedScenario& setup, const Program& program) {
  if (!setup.zoo) {
    return "the LibTorch backend builds zoo models (model.zoo); explicit layers and profiles "
           "have no architecture to run";
  }
  if (std::string why = zoo_unsupported(*setup.zoo); !why.empty()) return why;
  if (setup.training.data_parallel > 1) {
    return "the LibTorch backend runs one pipeline (training.data_parallel 1) so far";
  }
  if (setup.schedule.virtual_stages > 1) {
    return "the LibTorch backend runs one model chunk per rank so far (virtual_stages 1)";
  }
  for (const StagePlan& plan : setup.schedule.stage_plans.stages) {
    if (plan.forward_sizes != plan.backward_sizes) {
      return "the LibTorch backend needs each stage's backward cut to equal its forward cut";
    }
  }
  return "";
}

RealRunResult run_as_rank(const ResolvedScenario& setup, const Program& program,
                          const RankEnvironment& env, const RealRunOptions& options) {
  if (env.world_size != program.num_devices) {
    throw InputError("WORLD_SIZE=" + std::to_string(env.world_size) + " but the schedule needs " +
                     std::to_string(program.num_devices) + " ranks (one per pipeline device)");
  }
  RankExecutor executor(setup, program, env, options);
  return executor.run();
}

RealRunResult run_reference(const ResolvedScenario& setup, const RealRunOptions& options) {
  torch::set_num_threads(1);
  const proto::Zoo& zoo = *setup.zoo;
  const int layers = zoo_layer_count(zoo);
  torch::nn::Sequential model = zoo_layers(zoo, 0, layers, options.seed);
  auto optimizer = make_optimizer(setup.training.optimizer, model->parameters());
  const int batch = setup.training.global_batch;
  SyntheticTask task(zoo_sample_shape(zoo, 0), zoo_sample_shape(zoo, layers), batch, options.seed);
  RealRunResult result;
  for (int it = 0; it < setup.training.iterations; ++it) {
    const torch::Tensor x = task.inputs(it), y = task.targets(it);
    double loss_sum = 0;
    for (const SampleRange r : equal_ranges(batch, setup.training.microbatches)) {
      const torch::Tensor out = model->forward(x.slice(0, r.lo, r.hi));
      const double share = static_cast<double>(r.size()) / batch;
      const torch::Tensor loss = torch::mse_loss(out, y.slice(0, r.lo, r.hi)) * share;
      loss_sum += loss.item<double>();
      loss.backward();
    }
    optimizer->step();
    optimizer->zero_grad();
    result.losses.push_back(loss_sum);
  }
  for (int l = 0; l < layers; ++l) result.weights.push_back(parameter_sum(*model[l]));
  return result;
}

}  // namespace pipetwin
