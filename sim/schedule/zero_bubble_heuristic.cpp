#include "sim/schedule/zero_bubble_heuristic.h"

#include <algorithm>
#include <limits>

namespace pipetwin {
namespace {

constexpr double kNotPlacedYet = std::numeric_limits<double>::infinity();

// Fails a placement that no W can make room for, or whose input no stage will produce (the
// heuristic's rules can leave a stage without the forward the next one needs where
// microbatches are few or stages' memories differ): the candidate is dropped.
struct Unschedulable {};

class PaperHeuristic {
 public:
  PaperHeuristic(int32_t microbatches, const LinearPipelineCosts& costs, double limit,
                 const ZbHeuristicSettings& settings)
      : K_(static_cast<int32_t>(costs.stages.size())),
        M_(microbatches),
        costs_(costs),
        settings_(settings),
        fwd_end_(K_, std::vector<double>(M_, kNotPlacedYet)),
        bwd_end_(K_, std::vector<double>(M_, kNotPlacedYet)),
        free_at_(K_, 0.0),
        held_(K_, 0.0),
        idle_(K_, 0.0),
        forwards_(K_, 0),
        backwards_(K_, 0),
        weights_(K_, 0),
        order_(K_) {
    for (const ChunkPassCosts& c : costs.stages) limit_.push_back(limit * microbatch_peak(c));
  }

  ComputeOrder run() && {
    warm_up();
    for (int32_t m = 1; m < M_; ++m) steady_round(m);
    for (int32_t s = 0; s < K_; ++s) {
      while (weights_[s] < M_) put(s, Op::kBwdWeight);
    }
    return std::move(order_);
  }

 private:
  const ChunkPassCosts& stage(int32_t s) const { return costs_.stages[s]; }
  double backward_transfer(int32_t s) const { return costs_.backward_transfer_s[s]; }

  // When the input of stage s's next pass `op` arrives.
  double input_at(int32_t s, Op op) const {
    if (op == Op::kFwd) {
      return s == 0 ? 0.0 : fwd_end_[s - 1][forwards_[s]] + costs_.forward_transfer_s[s - 1];
    }
    if (op == Op::kBwdInput) {
      const int32_t m = backwards_[s];
      return s == K_ - 1 ? fwd_end_[s][m] : bwd_end_[s + 1][m] + backward_transfer(s);
    }
    return 0.0;  // a W follows its B on the same stage
  }

  bool fits(int32_t s, Op op) const {
    return held_[s] + stash_change(stage(s), op) <= limit_[s] * (1 + 1e-12) + 1e-300;
  }

  void put(int32_t s, Op op) {
    const double input = input_at(s, op);
    if (input == kNotPlacedYet) throw Unschedulable{};
    const double start = std::max(free_at_[s], input);
    if (forwards_[s] > 0) idle_[s] += start - free_at_[s];  // idle counts from the first F
    const double end = start + pass_seconds(stage(s), op);
    free_at_[s] = end;
    held_[s] += stash_change(stage(s), op);
    int32_t m = 0;
    if (op == Op::kFwd) {
      m = forwards_[s]++;
      fwd_end_[s][m] = end;
    } else if (op == Op::kBwdInput) {
      m = backwards_[s]++;
      bwd_end_[s][m] = end;
    } else {
      m = weights_[s]++;
    }
    order_[s].push_back({op, s, m});
  }

  // W's until `op` fits the memory limit.
  void make_room(int32_t s, Op op) {
    while (!fits(s, op)) {
      if (weights_[s] >= backwards_[s]) throw Unschedulable{};
      put(s, Op::kBwdWeight);
    }
  }

  double largest_idle() const { return *std::max_element(idle_.begin(), idle_.end()); }

  // Fills the wait for an input arriving at `ready` with pending W's: every W that ends by
  // then, and one more into the rest of the gap unless the gap fits within this stage's slack
  // to the pipeline's largest idle time (then only with fill_small_gaps).
  void fill_gap(int32_t s, double ready) {
    const double w = stage(s).bwd_weight_s;
    while (weights_[s] < backwards_[s] && free_at_[s] + w <= ready) put(s, Op::kBwdWeight);
    if (weights_[s] < backwards_[s] && free_at_[s] < ready) {
      const bool within_slack = ready - free_at_[s] <= largest_idle() - idle_[s];
      if (!within_slack || settings_.fill_small_gaps) put(s, Op::kBwdWeight);
    }
  }

  // Microbatch 0's forwards down the pipeline, each stage's extra warm-up forwards, then its
  // backwards up.
  void warm_up() {
    for (int32_t s = 0; s < K_; ++s) put(s, Op::kFwd);
    std::vector<int32_t> extra(K_, 0);
    // When the first B of the stage below ends; the stages are planned from the last up.
    double below_b_end = fwd_end_[K_ - 1][0] + stage(K_ - 1).bwd_input_s;
    for (int32_t s = K_ - 2; s >= 0; --s) {
      const ChunkPassCosts& c = stage(s);
      const double b_input = below_b_end + backward_transfer(s);
      double held = held_[s], t = free_at_[s];
      while (forwards_[s] + extra[s] < M_ && held + c.stash <= limit_[s] * (1 + 1e-12) + 1e-300) {
        const bool delays_b =
            settings_.bubble_before_first_b ? t + c.fwd_s > b_input : t >= b_input;
        if (delays_b) break;
        held += c.stash;
        t += c.fwd_s;
        ++extra[s];
      }
      below_b_end = std::max(t, b_input) + c.bwd_input_s;
    }
    // Fewer forwards in flight on each stage than on the one before it.
    for (int32_t s = 1; s < K_; ++s) {
      while (extra[s] > 0 && extra[s] >= extra[s - 1] && forwards_[s] + extra[s] < M_) --extra[s];
    }
    for (int32_t s = 0; s < K_; ++s) {
      for (int32_t k = 0; k < extra[s]; ++k) put(s, Op::kFwd);
    }
    for (int32_t s = K_ - 1; s >= 0; --s) put(s, Op::kBwdInput);
  }

  // Whether stage s runs a forward in this round.
  bool wants_forward(int32_t s) const {
    if (forwards_[s] >= M_) return false;
    if (!settings_.prioritize_b || s + 1 >= K_ || forwards_[s] < forwards_[s + 1] + 2) return true;
    // Two forwards ahead of the next stage: when does that stage's next gradient come back?
    const ChunkPassCosts& next = stage(s + 1);
    const double gradient_at =
        free_at_[s + 1] + next.fwd_s + next.bwd_input_s + backward_transfer(s);
    if (free_at_[s] >= gradient_at) return false;
    // The forward, with the W's it needs for room, still ends before the gradient: run it.
    const ChunkPassCosts& c = stage(s);
    double held = held_[s] + c.stash, w_time = 0;
    for (int32_t k = weights_[s]; held > limit_[s] * (1 + 1e-12) && k < backwards_[s]; ++k) {
      held -= c.weight_stash;
      w_time += c.bwd_weight_s;
    }
    if (free_at_[s] + c.fwd_s + w_time <= gradient_at) return true;
    // Else skip it when the wait for the gradient fits this stage's slack.
    return gradient_at - free_at_[s] > largest_idle() - idle_[s];
  }

  // Microbatch m's round: a forward on the stages that take one (a stage only if every stage
  // below it does), then B(m) from the last stage up.
  void steady_round(int32_t m) {
    std::vector<char> forward(K_);
    for (int32_t s = 0; s < K_; ++s) forward[s] = wants_forward(s);
    for (int32_t s = K_ - 2; s >= 0; --s) forward[s] = forward[s] && forward[s + 1];
    // And only where the stage before has produced (or now produces) the input.
    for (int32_t s = 1; s < K_; ++s) {
      forward[s] = forward[s] && forwards_[s] < forwards_[s - 1] + forward[s - 1];
    }
    for (int32_t s = 0; s < K_; ++s) {
      if (!forward[s]) continue;
      make_room(s, Op::kFwd);
      if (s > 0) fill_gap(s, input_at(s, Op::kFwd));
      put(s, Op::kFwd);
    }
    for (int32_t s = K_ - 1; s >= 0; --s) {
      if (backwards_[s] != m) throw Unschedulable{};
      make_room(s, Op::kBwdInput);
      if (s + 1 < K_) fill_gap(s, input_at(s, Op::kBwdInput));
      // The first stage, its forwards done, clears its W's before each B.
      if (s == 0 && forwards_[0] == M_) {
        while (weights_[0] < backwards_[0]) put(0, Op::kBwdWeight);
      }
      put(s, Op::kBwdInput);
    }
  }

  int32_t K_, M_;
  const LinearPipelineCosts& costs_;
  ZbHeuristicSettings settings_;
  std::vector<std::vector<double>> fwd_end_, bwd_end_;
  std::vector<double> limit_, free_at_, held_, idle_;
  std::vector<int32_t> forwards_, backwards_, weights_;
  ComputeOrder order_;
};

}  // namespace

std::optional<ComputeOrder> zb_heuristic_order(int32_t microbatches,
                                               const LinearPipelineCosts& costs,
                                               double limit_microbatches,
                                               const ZbHeuristicSettings& settings) {
  if (costs.stages.empty() || microbatches < 1) return std::nullopt;
  try {
    return PaperHeuristic(microbatches, costs, limit_microbatches, settings).run();
  } catch (const Unschedulable&) {
    return std::nullopt;
  }
}

double longest_stage_s(const TimedComputeOrder& timed, const LinearPipelineCosts& costs) {
  double longest = 0;
  for (size_t s = 0; s < timed.order.size(); ++s) {
    if (timed.order[s].empty()) continue;
    const double first_start =
        timed.end_s[s].front() - pass_seconds(costs.stages[s], timed.order[s].front().op);
    longest = std::max(longest, timed.end_s[s].back() - first_start);
  }
  return longest;
}

}  // namespace pipetwin
