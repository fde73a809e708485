#include "sim/schedule/pipefb_program.h"

#include <algorithm>
#include <cmath>

namespace pipetwin {
namespace {

int32_t forward_device(int32_t stage) { return 2 * stage; }
int32_t backward_device(int32_t stage) { return 2 * stage + 1; }

class PipeFbBuilder {
 public:
  PipeFbBuilder(const PipelineLayout& layout, bool recompute, int32_t iterations)
      : layout_(layout),
        recompute_(recompute),
        stages_(static_cast<int32_t>(layout.costs.size())),
        ranges_(layout.fwd_ranges.front()),
        builder_(2 * stages_, stages_, iterations, layout.global_batch),
        weights_in_(stages_, -1) {
    // Microbatch n reaches backward device s after the forwards of stages s..K-1 and the
    // backwards of stages K-1..s+1; meanwhile device s must have backwards to run. With
    // T_f and T_b the forward and backward times of the stages from s on, it needs
    // ceil((T_f + T_b) / t_b(s)) microbatches in flight to never wait.
    const int32_t b = ranges_.front().size();
    double forward_chain = 0, backward_chain = 0;
    window_.assign(stages_, 1);
    for (int32_t s = stages_ - 1; s >= 0; --s) {
      forward_chain += layout.costs[s].fwd.seconds(b);
      backward_chain += backward_seconds(s, b);
      const double own = backward_seconds(s, b);
      window_[s] =
          own > 0 ? static_cast<int32_t>(std::ceil((forward_chain + backward_chain) / own - 1e-9))
                  : static_cast<int32_t>(ranges_.size());
      window_[s] = std::max(window_[s], 1);
    }
    recv_order_ = backward_recv_order();
  }

  Program run(int32_t iterations) && {
    for (int32_t it = 0; it < iterations; ++it) emit_iteration(it);
    std::vector<int64_t> resident(2 * stages_, 0);
    std::vector<int32_t> stage_device;
    for (int32_t s = 0; s < stages_; ++s) {
      resident[forward_device(s)] = layout_.costs[s].weight_bytes;
      resident[backward_device(s)] = layout_.static_bytes[s];
      stage_device.push_back(forward_device(s));
    }
    builder_.set_static_bytes(resident);
    builder_.set_stage_device(stage_device);
    return std::move(builder_).finish();
  }

 private:
  int32_t microbatches() const { return static_cast<int32_t>(ranges_.size()); }

  Instruction compute(Op op, int32_t device, int32_t s, int32_t m, int32_t it) const {
    const StageCost& cost = layout_.costs[s];
    Instruction instr;
    instr.op = op;
    instr.device = device;
    instr.stage = s;
    instr.microbatch = m;
    instr.range = ranges_[m];
    instr.iteration = it;
    instr.compute_s = op == Op::kFwd ? cost.fwd.seconds(ranges_[m].size())
                                     : backward_seconds(s, ranges_[m].size());
    return instr;
  }

  Instruction send_instruction(Op op, int32_t from, int32_t to, int32_t s, int32_t m, int32_t it,
                               int64_t bytes) const {
    Instruction send;
    send.op = op;
    send.device = from;
    send.peer_device = to;
    send.stage = s;
    send.microbatch = m;
    send.range = m >= 0 ? ranges_[m] : SampleRange{0, layout_.global_batch};
    send.iteration = it;
    send.bytes = bytes;
    return send;
  }

  // Adds the RECV of `send` (at the end of its lane) and pairs them. As in the lowering,
  // a RECV names the stage that consumes it: activations go to the next stage, gradients
  // to the previous one.
  int32_t receive(int32_t send_id, const Instruction& send) {
    Instruction recv = send;
    recv.op = partner_op(send.op);
    if (send.op == Op::kSendAct) recv.stage = send.stage + 1;
    if (send.op == Op::kSendGrad) recv.stage = send.stage - 1;
    recv.device = send.peer_device;
    recv.peer_device = send.device;
    recv.stash_bytes = 0;
    const int32_t id = builder_.add(recv);
    builder_.pair(send_id, id);
    return id;
  }

  int64_t per_sample(double bytes, int32_t m) const {
    return std::llround(bytes * ranges_[m].size());
  }

  void emit_iteration(int32_t it) {
    const int32_t M = microbatches();
    std::vector<std::vector<int32_t>> fwd(stages_), bwd(stages_);
    std::vector<int32_t> optim(stages_);
    for (int32_t s = 0; s < stages_; ++s) {
      for (int32_t m = 0; m < M; ++m) {
        Instruction f = compute(Op::kFwd, forward_device(s), s, m, it);
        f.stash_bytes = per_sample(handed_over(s), m);
        fwd[s].push_back(builder_.add(f));
      }
      if (weights_in_[s] >= 0) builder_.add_dependency(fwd[s][0], weights_in_[s]);
      // The backward device's memory is the stash it received (a receive buffer).
      for (int32_t m = 0; m < M; ++m) {
        bwd[s].push_back(builder_.add(compute(Op::kBwd, backward_device(s), s, m, it)));
      }
      Instruction update;
      update.op = Op::kOptim;
      update.device = backward_device(s);
      update.stage = s;
      update.range = {0, layout_.global_batch};
      update.iteration = it;
      update.compute_s = layout_.costs[s].optim_s;
      optim[s] = builder_.add(update);
    }
    // SENDs, each lane in its order. Forward device: each microbatch's activations, then
    // its stash. Backward device: the gradients, then the weights.
    struct Sent {
      int32_t id = -1;
      Instruction instr;
    };
    std::vector<std::vector<Sent>> act(stages_, std::vector<Sent>(M)), stash = act, grad = act;
    std::vector<Sent> weights(stages_);
    auto send = [&](Sent& slot, const Instruction& instr, int32_t after) {
      slot = {builder_.add(instr), instr};
      builder_.add_dependency(slot.id, after);
    };
    for (int32_t s = 0; s < stages_; ++s) {
      const StageCost& cost = layout_.costs[s];
      for (int32_t m = 0; m < M; ++m) {
        if (s + 1 < stages_) {
          send(act[s][m],
               send_instruction(Op::kSendAct, forward_device(s), forward_device(s + 1), s, m, it,
                                per_sample(cost.output_bytes_per_sample, m)),
               fwd[s][m]);
        }
        Instruction out = send_instruction(Op::kSendStash, forward_device(s), backward_device(s), s,
                                           m, it, per_sample(handed_over(s), m));
        out.stash_bytes = out.bytes;  // freed on the forward device when it has left
        send(stash[s][m], out, fwd[s][m]);
        // The next forward waits until this stash has left: the forward device holds one,
        // and the backward device's window (below) reaches back to it through the
        // rendezvous. Every dependency stays on one device, as real ranks need.
        if (m + 1 < M) builder_.add_dependency(fwd[s][m + 1], stash[s][m].id);
      }
      for (int32_t m = 0; m < M && s > 0; ++m) {
        send(grad[s][m],
             send_instruction(Op::kSendGrad, backward_device(s), backward_device(s - 1), s, m, it,
                              per_sample(layout_.costs[s - 1].output_bytes_per_sample, m)),
             bwd[s][m]);
      }
      send(weights[s],
           send_instruction(Op::kSendWeights, backward_device(s), forward_device(s), s, -1, it,
                            cost.weight_bytes),
           optim[s]);
    }
    // RECVs, each lane in its order.
    for (int32_t s = 0; s < stages_; ++s) {
      for (int32_t m = 0; m < M && s > 0; ++m) {
        builder_.add_dependency(fwd[s][m], receive(act[s - 1][m].id, act[s - 1][m].instr));
      }
      weights_in_[s] = receive(weights[s].id, weights[s].instr);
      for (const int32_t key : recv_order_[s]) {
        const bool is_stash = key >= 0;
        const int32_t m = is_stash ? key : -key - 1;
        Sent& sent = is_stash ? stash[s][m] : grad[s + 1][m];
        const int32_t recv = receive(sent.id, sent.instr);
        builder_.add_dependency(bwd[s][m], recv);
        // Stash m lands once backward m - W has freed its slot.
        if (is_stash && m >= window_[s]) builder_.add_dependency(recv, bwd[s][m - window_[s]]);
      }
    }
  }

  // End times of the forwards and backwards with free communication: forward (s, n) after
  // forward (s, n - 1), forward (s - 1, n) and backward (s, n - 1 - W_s) (stash n - 1
  // must have left); backward (s, n) after backward (s, n - 1), forward (s, n) and backward
  // (s + 1, n).
  void ideal_times(std::vector<std::vector<double>>& fwd_end,
                   std::vector<std::vector<double>>& bwd_end) const {
    const int32_t M = microbatches();
    fwd_end.assign(stages_, std::vector<double>(M, 0));
    bwd_end = fwd_end;
    for (int32_t n = 0; n < M; ++n) {
      for (int32_t s = 0; s < stages_; ++s) {
        double start = n > 0 ? fwd_end[s][n - 1] : 0;
        if (s > 0) start = std::max(start, fwd_end[s - 1][n]);
        if (n - 1 >= window_[s]) start = std::max(start, bwd_end[s][n - 1 - window_[s]]);
        fwd_end[s][n] = start + layout_.costs[s].fwd.seconds(ranges_[n].size());
      }
      for (int32_t s = stages_ - 1; s >= 0; --s) {
        double start = std::max(n > 0 ? bwd_end[s][n - 1] : 0, fwd_end[s][n]);
        if (s + 1 < stages_) start = std::max(start, bwd_end[s + 1][n]);
        bwd_end[s][n] = start + backward_seconds(s, ranges_[n].size());
      }
    }
  }

  // Each backward device's recv lane, the same every iteration: stashes (key m) and
  // gradients (key -m-1) in the order they arrive in the contention-free schedule, so that
  // neither stream waits behind the other.
  std::vector<std::vector<int32_t>> backward_recv_order() const {
    const int32_t M = microbatches();
    std::vector<std::vector<double>> fwd_end, bwd_end;
    ideal_times(fwd_end, bwd_end);
    std::vector<std::vector<int32_t>> order(stages_);
    for (int32_t s = 0; s < stages_; ++s) {
      std::vector<std::pair<double, int32_t>> arrivals;  // (time, key)
      for (int32_t m = 0; m < M; ++m) {
        // A stash lands when it is computed and its slot is free.
        const double slot = m >= window_[s] ? bwd_end[s][m - window_[s]] : 0;
        arrivals.emplace_back(std::max(fwd_end[s][m], slot), m);
        if (s + 1 < stages_) arrivals.emplace_back(bwd_end[s + 1][m], -m - 1);
      }
      // Gradients first at equal times: the backward that frees a slot needs its gradient.
      std::stable_sort(arrivals.begin(), arrivals.end(), [](const auto& a, const auto& b) {
        return a.first < b.first || (a.first == b.first && a.second < 0 && b.second >= 0);
      });
      for (const auto& [time, key] : arrivals) order[s].push_back(key);
    }
    return order;
  }

  // Bytes per sample of what a stage's forward device hands to its backward device.
  double handed_over(int32_t s) const {
    if (!recompute_) return layout_.costs[s].stash_bytes_per_sample;
    return s > 0 ? layout_.costs[s - 1].output_bytes_per_sample : 0;
  }
  double backward_seconds(int32_t s, int32_t samples) const {
    const StageCost& cost = layout_.costs[s];
    return cost.bwd.seconds(samples) + (recompute_ ? cost.fwd.seconds(samples) : 0);
  }

  const PipelineLayout& layout_;
  bool recompute_;
  int32_t stages_;
  const std::vector<SampleRange>& ranges_;
  ProgramBuilder builder_;
  std::vector<int32_t> weights_in_;  // per stage: RECV_WEIGHTS of the previous iteration
  std::vector<int32_t> window_;      // per stage: microbatches in flight (see above)
  std::vector<std::vector<int32_t>> recv_order_;  // per backward device, see backward_recv_order
};

}  // namespace

Program pipefb_program(const PipelineLayout& layout, bool recompute, int32_t iterations) {
  return PipeFbBuilder(layout, recompute, iterations).run(iterations);
}

}  // namespace pipetwin
