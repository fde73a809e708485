#include "sim/schedule/zero_bubble_order.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>

#include "sim/schedule/recent_memo.h"

namespace pipetwin {

ComputeOrder split_backwards(const ComputeOrder& order) {
  ComputeOrder split(order.size());
  for (size_t d = 0; d < order.size(); ++d) {
    for (const ComputeAction& a : order[d]) {
      if (a.op != Op::kBwd) {
        split[d].push_back(a);
        continue;
      }
      split[d].push_back({Op::kBwdInput, a.stage, a.microbatch});
      split[d].push_back({Op::kBwdWeight, a.stage, a.microbatch});
    }
  }
  return split;
}

namespace {

// One stage's list as it is built: forwards, input and weight gradients each in
// microbatch order, W's always for the oldest microbatch whose B has run.
class StageList {
 public:
  explicit StageList(int32_t stage) : stage_(stage) {}
  void forward() { list_.push_back({Op::kFwd, stage_, forwards_++}); }
  void input_gradient() { list_.push_back({Op::kBwdInput, stage_, inputs_++}); }
  void weight_gradient() { list_.push_back({Op::kBwdWeight, stage_, weights_++}); }
  int32_t forwards() const { return forwards_; }
  int32_t inputs() const { return inputs_; }
  int32_t weights() const { return weights_; }
  std::vector<ComputeAction> take() && { return std::move(list_); }

 private:
  int32_t stage_;
  int32_t forwards_ = 0, inputs_ = 0, weights_ = 0;
  std::vector<ComputeAction> list_;
};

}  // namespace

ComputeOrder zb_h1_order(int32_t stages, int32_t microbatches) {
  ComputeOrder order;
  for (int32_t s = 0; s < stages; ++s) {
    StageList list(s);
    const int32_t warmup = std::min(microbatches, stages - s - 1);
    for (int32_t i = 0; i < warmup; ++i) list.forward();
    // Stage s defers its first s W's: they fill the cool-down, where 1F1B idles.
    for (int32_t i = 0; i < microbatches - warmup; ++i) {
      list.forward();
      list.input_gradient();
      if (i >= s) list.weight_gradient();
    }
    for (int32_t i = 0; i < warmup; ++i) {
      list.input_gradient();
      if (microbatches - warmup + i >= s) list.weight_gradient();
    }
    while (list.weights() < microbatches) list.weight_gradient();
    order.push_back(std::move(list).take());
  }
  return order;
}

ComputeOrder zb_h2_order(int32_t stages, int32_t microbatches) {
  ComputeOrder order;
  for (int32_t s = 0; s < stages; ++s) {
    StageList list(s);
    // K-s-1 more warm-up forwards than 1F1B: they fill the warm-up bubble, and the W's
    // deferred behind them the cool-down.
    const int32_t warmup = std::min(microbatches, 2 * (stages - s) - 1);
    for (int32_t i = 0; i < warmup; ++i) list.forward();
    while (list.forwards() < microbatches) {
      list.input_gradient();
      list.forward();
    }
    while (list.inputs() < microbatches) {
      list.input_gradient();
      list.weight_gradient();
    }
    while (list.weights() < microbatches) list.weight_gradient();
    order.push_back(std::move(list).take());
  }
  return order;
}

namespace {

// The greedy list scheduler behind ZB-V: an event simulation of the devices' compute
// lanes over the chunks' pass costs, communication left out.
class VScheduler {
 public:
  VScheduler(int32_t devices, int32_t microbatches, const std::vector<ChunkPassCosts>& costs)
      : devices_(devices),
        microbatches_(microbatches),
        chunks_(2 * devices),
        costs_(costs),
        timed_{ComputeOrder(devices), std::vector<std::vector<double>>(devices)},
        free_at_(devices, 0.0),
        waiting_(devices, false),
        held_(devices, 0.0),
        limit_(devices, 0.0),
        pending_weights_(devices),
        next_fwd_(chunks_, 0),
        next_bwd_(chunks_, 0),
        fwd_end_(chunks_, std::vector<double>(microbatches, kNotRun)),
        bwd_end_(chunks_, std::vector<double>(microbatches, kNotRun)) {
    for (int32_t d = 0; d < devices; ++d) {
      limit_[d] = std::min(devices, microbatches) * (costs[d].stash + costs[second_leg(d)].stash);
    }
  }

  TimedComputeOrder run() && {
    int64_t remaining = 3LL * microbatches_ * chunks_;
    while (remaining > 0) {
      const int32_t d = next_device();
      if (run_one(d)) {
        --remaining;
        std::fill(waiting_.begin(), waiting_.end(), false);
        continue;
      }
      // Nothing can start on d now. Let every other device at this time have its turn
      // first, then move d on to the next moment something may change.
      bool others_first = false;
      for (int32_t e = 0; e < devices_; ++e) {
        others_first |= e != d && has_work(e) && !waiting_[e] && free_at_[e] <= free_at_[d];
      }
      if (others_first) {
        waiting_[d] = true;
        continue;
      }
      const double next = next_event_after(free_at_[d]);
      if (next == kNotRun) throw std::logic_error("ZB-V scheduler: no device can proceed");
      free_at_[d] = next;
      waiting_[d] = false;
    }
    return std::move(timed_);
  }

 private:
  static constexpr double kNotRun = std::numeric_limits<double>::infinity();

  int32_t device_of(int32_t chunk) const { return v_chunk_device(devices_, chunk); }
  int32_t second_leg(int32_t device) const { return chunks_ - 1 - device; }
  bool has_work(int32_t d) const {
    return next_bwd_[d] < microbatches_ || next_bwd_[second_leg(d)] < microbatches_ ||
           !pending_weights_[d].empty();
  }
  bool done_by(double end, double t) const { return end != kNotRun && end <= t; }

  // The earliest device with work, devices that found nothing to do at that time last.
  int32_t next_device() const {
    int32_t best = -1;
    for (int32_t d = 0; d < devices_; ++d) {
      if (!has_work(d)) continue;
      if (best < 0 || free_at_[d] < free_at_[best] ||
          (free_at_[d] == free_at_[best] && waiting_[best] && !waiting_[d])) {
        best = d;
      }
    }
    return best;
  }

  // The first end of a pass, or free time of a device, after t.
  double next_event_after(double t) const {
    const auto later = ends_.upper_bound(t);
    double next = later == ends_.end() ? kNotRun : *later;
    for (int32_t e = 0; e < devices_; ++e) {
      if (has_work(e) && free_at_[e] > t) next = std::min(next, free_at_[e]);
    }
    return next;
  }

  bool input_gradient_ready(int32_t c, double t) const {
    const int32_t m = next_bwd_[c];
    if (m >= microbatches_) return false;
    return c == chunks_ - 1 ? done_by(fwd_end_[c][m], t) : done_by(bwd_end_[c + 1][m], t);
  }

  // A forward fits when the device's stashes stay within the limit; one of the first leg
  // also keeps room for the second-leg forward of the microbatch before it, so that the
  // microbatches already in flight can always reach the loss (no deadlock on memory).
  bool forward_ready(int32_t c, double t) const {
    const int32_t m = next_fwd_[c];
    if (m >= microbatches_) return false;
    if (c > 0 && !done_by(fwd_end_[c - 1][m], t)) return false;
    const int32_t d = device_of(c);
    const double reserve = c < devices_ ? costs_[second_leg(d)].stash : 0.0;
    return held_[d] + costs_[c].stash + reserve <= limit_[d] * (1 + 1e-12);
  }

  void place(int32_t d, Op op, int32_t c, int32_t m, double seconds) {
    free_at_[d] += seconds;
    timed_.order[d].push_back({op, c, m});
    timed_.end_s[d].push_back(free_at_[d]);
    ends_.insert(free_at_[d]);
  }

  // Runs on device d, at its free time, a ready B, else a ready F that fits, else its
  // oldest pending W (priority B > F > W). False when none can start.
  bool run_one(int32_t d) {
    const double t = free_at_[d];
    const int32_t legs[2] = {second_leg(d), d};  // the later chunk first
    // B: the oldest microbatch first.
    int32_t best = -1;
    for (int32_t c : legs) {
      if (input_gradient_ready(c, t) && (best < 0 || next_bwd_[c] < next_bwd_[best])) best = c;
    }
    if (best >= 0) {
      const int32_t m = next_bwd_[best]++;
      place(d, Op::kBwdInput, best, m, costs_[best].bwd_input_s);
      bwd_end_[best][m] = free_at_[d];
      held_[d] -= costs_[best].stash - costs_[best].weight_stash;
      pending_weights_[d].push_back({best, m});
      return true;
    }
    // F: the second leg first, which brings a microbatch to its loss and backward sooner.
    for (int32_t c : legs) {
      if (!forward_ready(c, t)) continue;
      const int32_t m = next_fwd_[c]++;
      place(d, Op::kFwd, c, m, costs_[c].fwd_s);
      fwd_end_[c][m] = free_at_[d];
      held_[d] += costs_[c].stash;
      return true;
    }
    if (!pending_weights_[d].empty()) {
      const auto [c, m] = pending_weights_[d].front();
      pending_weights_[d].pop_front();
      place(d, Op::kBwdWeight, c, m, costs_[c].bwd_weight_s);
      held_[d] -= costs_[c].weight_stash;
      return true;
    }
    return false;
  }

  int32_t devices_, microbatches_, chunks_;
  const std::vector<ChunkPassCosts>& costs_;
  TimedComputeOrder timed_;
  std::vector<double> free_at_;
  std::vector<bool> waiting_;  // found nothing to run at its free time
  std::vector<double> held_, limit_;
  std::vector<std::deque<std::pair<int32_t, int32_t>>> pending_weights_;  // (chunk, mb)
  std::vector<int32_t> next_fwd_, next_bwd_;                              // per chunk
  std::vector<std::vector<double>> fwd_end_, bwd_end_;                    // [chunk][mb]
  std::set<double> ends_;                                                 // of every pass
};

}  // namespace

ComputeOrder zb_v_order(int32_t devices, int32_t microbatches,
                        const std::vector<ChunkPassCosts>& chunk_costs) {
  return zb_v_schedule(devices, microbatches, chunk_costs).order;
}

TimedComputeOrder zb_v_schedule(int32_t devices, int32_t microbatches,
                                const std::vector<ChunkPassCosts>& chunk_costs) {
  if (static_cast<int32_t>(chunk_costs.size()) != 2 * devices) {
    throw std::invalid_argument("zb_v_order: " + std::to_string(chunk_costs.size()) +
                                " chunk costs for " + std::to_string(devices) + " devices");
  }
  struct Inputs {
    int32_t devices, microbatches;
    std::vector<ChunkPassCosts> chunk_costs;
    bool operator==(const Inputs&) const = default;
  };
  thread_local RecentMemo<Inputs, TimedComputeOrder> memo(8);
  return memo.get({devices, microbatches, chunk_costs},
                  [&] { return VScheduler(devices, microbatches, chunk_costs).run(); });
}

}  // namespace pipetwin
