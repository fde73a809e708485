#include "sim/schedule/zero_bubble_auto.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>

#include "sim/schedule/recent_memo.h"
#include "sim/schedule/zero_bubble_heuristic.h"

namespace pipetwin {
namespace {

constexpr double kUnknown = std::numeric_limits<double>::infinity();

// The end of every F and B per (stage, microbatch), as far as it is known.
struct PassEnds {
  PassEnds(int32_t stages, int32_t microbatches)
      : fwd(stages, std::vector<double>(microbatches, kUnknown)),
        bwd(stages, std::vector<double>(microbatches, kUnknown)) {}
  std::vector<std::vector<double>> fwd, bwd;
};

// When the input of each pass reaches its stage; kUnknown until its producer is placed.
double forward_input_at(const PassEnds& ends, const LinearPipelineCosts& costs, int32_t s,
                        int32_t m) {
  return s == 0 ? 0.0 : ends.fwd[s - 1][m] + costs.forward_transfer_s[s - 1];
}
double backward_input_at(const PassEnds& ends, const LinearPipelineCosts& costs, int32_t s,
                         int32_t m) {
  const int32_t last = static_cast<int32_t>(costs.stages.size()) - 1;
  return s == last ? ends.fwd[s][m] : ends.bwd[s + 1][m] + costs.backward_transfer_s[s];
}

// The greedy list scheduler. Each stage, at its free time, runs a B whose gradient has
// arrived, else an F whose input has arrived and whose stash fits (and, before the stage's
// first B, only `warmup[s]` of them), else its oldest pending W, else waits for the next
// arrival. Stages are placed in the order of their proposed starts, so a pass is placed only
// once everything that starts earlier is known. The order it returns is timed, like every
// candidate, by time_linear_order, which starts each pass exactly where it was placed.
class GreedyScheduler {
 public:
  GreedyScheduler(int32_t microbatches, const LinearPipelineCosts& costs, double limit,
                  std::vector<int32_t> warmup)
      : K_(static_cast<int32_t>(costs.stages.size())),
        M_(microbatches),
        costs_(costs),
        ends_(K_, M_),
        warmup_(std::move(warmup)),
        free_at_(K_, 0.0),
        held_(K_, 0.0),
        next_fwd_(K_, 0),
        next_bwd_(K_, 0),
        pending_(K_),
        order_(K_) {
    for (const ChunkPassCosts& c : costs.stages) limit_.push_back(limit * microbatch_peak(c));
  }

  ComputeOrder run() && {
    // A stage's proposal changes only when it or a neighbour places a pass (its free time,
    // its stashes, or the arrival of its input): the others' are kept.
    // The earliest proposal (the lowest stage among equals) is found in a tournament tree.
    std::vector<Proposal> proposals(K_);
    int32_t leaves = 1;
    while (leaves < K_) leaves *= 2;
    std::vector<int32_t> tree(2 * leaves, -1);  // the winning stage of each subtree, -1: none
    const auto earlier = [&](int32_t a, int32_t b) {
      if (a < 0 || b < 0) return a >= 0;
      return proposals[a].start < proposals[b].start ||
             (proposals[a].start == proposals[b].start && a < b);
    };
    const auto update = [&](int32_t s) {
      proposals[s] = propose(s);
      int32_t node = leaves + s;
      tree[node] = proposals[s].start < kUnknown ? s : -1;
      for (node /= 2; node >= 1; node /= 2) {
        const int32_t l = tree[2 * node], r = tree[2 * node + 1];
        tree[node] = earlier(r, l) ? r : l;
      }
    };
    for (int32_t s = 0; s < K_; ++s) update(s);
    for (int64_t left = 3LL * K_ * M_; left > 0; --left) {
      const int32_t best = tree[1];
      if (best < 0) throw std::logic_error("ZB_AUTO scheduler: no stage can proceed");
      place(best, proposals[best]);
      for (int32_t s = std::max(0, best - 1); s <= std::min(K_ - 1, best + 1); ++s) update(s);
    }
    return std::move(order_);
  }

 private:
  struct Proposal {
    double start = kUnknown;
    Op op = Op::kFwd;
  };

  bool forward_allowed(int32_t s) const {
    if (next_fwd_[s] >= M_) return false;
    if (next_bwd_[s] == 0 && next_fwd_[s] >= warmup_[s]) return false;
    const ChunkPassCosts& c = costs_.stages[s];
    return held_[s] + c.stash <= limit_[s] * (1 + 1e-12) + 1e-300;
  }

  Proposal propose(int32_t s) const {
    const double t = free_at_[s];
    const double b_at =
        next_bwd_[s] < next_fwd_[s] ? backward_input_at(ends_, costs_, s, next_bwd_[s]) : kUnknown;
    const double f_at =
        forward_allowed(s) ? forward_input_at(ends_, costs_, s, next_fwd_[s]) : kUnknown;
    if (b_at <= t) return {t, Op::kBwdInput};
    if (f_at <= t) return {t, Op::kFwd};
    if (!pending_[s].empty()) return {t, Op::kBwdWeight};
    if (b_at <= f_at) return {b_at, Op::kBwdInput};
    return {f_at, Op::kFwd};
  }

  void place(int32_t s, const Proposal& p) {
    int32_t m = 0;
    if (p.op == Op::kFwd) {
      m = next_fwd_[s]++;
    } else if (p.op == Op::kBwdInput) {
      m = next_bwd_[s]++;
      pending_[s].push_back(m);
    } else {
      m = pending_[s].front();
      pending_[s].pop_front();
    }
    const ChunkPassCosts& c = costs_.stages[s];
    const double end = p.start + pass_seconds(c, p.op);
    free_at_[s] = end;
    held_[s] += stash_change(c, p.op);
    if (p.op == Op::kFwd) ends_.fwd[s][m] = end;
    if (p.op == Op::kBwdInput) ends_.bwd[s][m] = end;
    order_[s].push_back({p.op, s, m});
  }

  int32_t K_, M_;
  const LinearPipelineCosts& costs_;
  PassEnds ends_;
  std::vector<int32_t> warmup_;
  std::vector<double> limit_, free_at_, held_;
  std::vector<int32_t> next_fwd_, next_bwd_;
  std::vector<std::deque<int32_t>> pending_;  // microbatches whose W is still to run
  ComputeOrder order_;
};

bool fits(const std::vector<double>& peak_stash, const LinearPipelineCosts& costs, double limit) {
  for (size_t s = 0; s < costs.stages.size(); ++s) {
    if (peak_stash[s] > limit * microbatch_peak(costs.stages[s]) * (1 + 1e-9) + 1e-300) {
      return false;
    }
  }
  return true;
}

// Every candidate order, before timing: the greedy scheduler's six, the paper's heuristic's
// (those that fit), ZB-H1, ZB-H2 and split 1F1B, which comes last.
std::vector<ComputeOrder> candidate_orders(int32_t microbatches, const LinearPipelineCosts& costs,
                                           double limit_microbatches) {
  const int32_t K = static_cast<int32_t>(costs.stages.size());
  std::vector<ComputeOrder> orders;
  // The warm-up before the first B: from 1F1B's K-s forwards to ZB-H2's 2(K-s)-1 in five
  // steps, and as many as the memory holds.
  for (int32_t step = 0; step <= 5; ++step) {
    std::vector<int32_t> warmup(K);
    for (int32_t s = 0; s < K; ++s) {
      warmup[s] = step == 5 ? microbatches
                            : K - s + static_cast<int32_t>(std::lround(step * (K - s - 1) / 4.0));
    }
    orders.push_back(
        GreedyScheduler(microbatches, costs, limit_microbatches, std::move(warmup)).run());
  }
  // The paper's own heuristic, with each setting of its three choices.
  for (int32_t bits = 0; bits < 8; ++bits) {
    const ZbHeuristicSettings settings{.bubble_before_first_b = (bits & 1) != 0,
                                       .prioritize_b = (bits & 2) != 0,
                                       .fill_small_gaps = (bits & 4) != 0};
    std::optional<ComputeOrder> order =
        zb_heuristic_order(microbatches, costs, limit_microbatches, settings);
    if (order) orders.push_back(std::move(*order));
  }
  orders.push_back(zb_h1_order(K, microbatches));
  orders.push_back(zb_h2_order(K, microbatches));
  orders.push_back(split_backwards(one_f_one_b_order(K, microbatches)));
  return orders;
}

// The pipeline's max-plus timing of `order`: when each stage's last pass ends (`finish`) and
// each stage's peak stash, calling on_end(stage, end) for every pass in order.
template <class OnEnd>
void time_order(const ComputeOrder& order, int32_t microbatches, const LinearPipelineCosts& costs,
                std::vector<double>& finish, std::vector<double>& peak, OnEnd&& on_end) {
  const int32_t K = static_cast<int32_t>(costs.stages.size());
  PassEnds ends(K, microbatches);
  std::vector<std::vector<double>> weight_ready(K, std::vector<double>(microbatches, kUnknown));
  std::vector<size_t> next(K, 0);
  std::vector<double> free_at(K, 0.0), held(K, 0.0);
  peak.assign(K, 0.0);
  // Each stage runs its passes until one waits for an input; a stage that advanced may have
  // produced what its neighbours wait for, so they are looked at again (a worklist: sweeping
  // every stage until none advances took a sweep per stage a gradient travels).
  std::deque<int32_t> work;
  std::vector<char> queued(K, 1);
  for (int32_t s = 0; s < K; ++s) work.push_back(s);
  while (!work.empty()) {
    const int32_t s = work.front();
    work.pop_front();
    queued[s] = 0;
    bool advanced = false;
    for (; next[s] < order[s].size(); ++next[s]) {
      const ComputeAction& a = order[s][next[s]];
      const double input = a.op == Op::kFwd        ? forward_input_at(ends, costs, s, a.microbatch)
                           : a.op == Op::kBwdInput ? backward_input_at(ends, costs, s, a.microbatch)
                                                   : weight_ready[s][a.microbatch];
      if (input == kUnknown) break;
      const ChunkPassCosts& c = costs.stages[s];
      const double end = std::max(free_at[s], input) + pass_seconds(c, a.op);
      free_at[s] = end;
      held[s] += stash_change(c, a.op);
      peak[s] = std::max(peak[s], held[s]);
      if (a.op == Op::kFwd) ends.fwd[s][a.microbatch] = end;
      if (a.op == Op::kBwdInput) {
        ends.bwd[s][a.microbatch] = end;
        weight_ready[s][a.microbatch] = end;
      }
      on_end(s, end);
      advanced = true;
    }
    if (!advanced) continue;
    for (const int32_t neighbour : {s - 1, s + 1}) {
      if (neighbour >= 0 && neighbour < K && !queued[neighbour]) {
        queued[neighbour] = 1;
        work.push_back(neighbour);
      }
    }
  }
  for (int32_t s = 0; s < K; ++s) {
    if (next[s] < order[s].size()) {
      throw std::logic_error("time_linear_order: stage " + std::to_string(s) +
                             " waits for an input that never comes");
    }
  }
  finish = std::move(free_at);
}

// The makespan of passes that finish at `finish`, each stage's update after its last pass.
double makespan_of(const std::vector<double>& finish, const LinearPipelineCosts& costs) {
  double makespan = 0;
  for (size_t s = 0; s < finish.size(); ++s) {
    makespan = std::max(makespan, finish[s] + costs.update_s[s]);
  }
  return makespan;
}

// The candidate orders for these inputs, each with when its stages finish and their peak
// stashes (built and timed once for the last few inputs: they depend on the passes, the
// transfers and the limit; the updates' times only add to the finish).
struct TimedCandidates {
  std::vector<ComputeOrder> orders;
  std::vector<std::vector<double>> finish, peaks;
};
const TimedCandidates& memoized_candidates(int32_t microbatches, const LinearPipelineCosts& costs,
                                           double limit_microbatches) {
  if (limit_microbatches < 1) {
    throw std::invalid_argument("zb_auto_candidates: a limit of " +
                                std::to_string(limit_microbatches) +
                                " microbatches leaves no room for one forward");
  }
  struct Inputs {
    int32_t microbatches;
    double limit;
    std::vector<ChunkPassCosts> stages;
    std::vector<double> forward_transfer_s, backward_transfer_s;
    bool operator==(const Inputs&) const = default;
  };
  thread_local RecentMemo<Inputs, TimedCandidates> memo(8);
  return memo.get({microbatches, limit_microbatches, costs.stages, costs.forward_transfer_s,
                   costs.backward_transfer_s},
                  [&] {
                    TimedCandidates c;
                    c.orders = candidate_orders(microbatches, costs, limit_microbatches);
                    c.finish.resize(c.orders.size());
                    c.peaks.resize(c.orders.size());
                    for (size_t k = 0; k < c.orders.size(); ++k) {
                      time_order(c.orders[k], microbatches, costs, c.finish[k], c.peaks[k],
                                 [](int32_t, double) {});
                    }
                    return c;
                  });
}

// The candidates that stand (those within the limit, or, when none before it is, the last:
// 1F1B with split backwards), fastest first (the earlier among equals), each order once.
std::vector<size_t> ranked(const TimedCandidates& c, const LinearPipelineCosts& costs,
                           double limit_microbatches) {
  std::vector<size_t> standing;
  for (size_t k = 0; k < c.orders.size(); ++k) {
    const bool last_resort = k + 1 == c.orders.size() && standing.empty();
    if (last_resort || fits(c.peaks[k], costs, limit_microbatches)) standing.push_back(k);
  }
  std::vector<double> makespan(c.orders.size());
  for (size_t k : standing) makespan[k] = makespan_of(c.finish[k], costs);
  std::stable_sort(standing.begin(), standing.end(),
                   [&](size_t a, size_t b) { return makespan[a] < makespan[b]; });
  std::vector<size_t> distinct;
  for (size_t k : standing) {
    const bool seen = std::any_of(distinct.begin(), distinct.end(),
                                  [&](size_t d) { return c.orders[d] == c.orders[k]; });
    if (!seen) distinct.push_back(k);
  }
  return distinct;
}

}  // namespace

OrderTiming time_linear_order(const ComputeOrder& order, int32_t microbatches,
                              const LinearPipelineCosts& costs) {
  OrderTiming timing;
  timing.timed = {order, std::vector<std::vector<double>>(costs.stages.size())};
  std::vector<double> finish;
  time_order(order, microbatches, costs, finish, timing.peak_stash,
             [&](int32_t s, double end) { timing.timed.end_s[s].push_back(end); });
  timing.makespan_s = makespan_of(finish, costs);
  return timing;
}

std::vector<TimedComputeOrder> zb_auto_candidates(int32_t microbatches,
                                                  const LinearPipelineCosts& costs,
                                                  double limit_microbatches) {
  const TimedCandidates& c = memoized_candidates(microbatches, costs, limit_microbatches);
  std::vector<TimedComputeOrder> candidates;
  for (size_t k : ranked(c, costs, limit_microbatches)) {
    candidates.push_back(time_linear_order(c.orders[k], microbatches, costs).timed);
  }
  return candidates;
}

ComputeOrder zb_auto_fastest_order(int32_t microbatches, const LinearPipelineCosts& costs,
                                   double limit_microbatches) {
  const TimedCandidates& c = memoized_candidates(microbatches, costs, limit_microbatches);
  return c.orders[ranked(c, costs, limit_microbatches).front()];
}

}  // namespace pipetwin
