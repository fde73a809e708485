#include "sim/schedule/async_order.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <stdexcept>

#include "sim/spec/stage_replicas.h"

namespace pipetwin {
namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();

// Microbatches a device of stage s keeps in flight, at most. One device per stage: 1F1B's
// K - s. Replicated stages: enough to keep every replica busy by Little's law. A replica
// starts one of its microbatches every r_s P (P: the slowest stage's or cut's time per
// microbatch), and each stays away for its round trip: its own forward and backward, the
// transfers both ways, and its stay at the next stage (that stage's count times its cycle).
// With equal stage times and free transfers this is PipeDream's NOAM,
// ceil(devices from s on / r_s); transfers and unequal stages need more. One more absorbs
// the uneven arrivals that round robin makes between stages of different replica counts.
std::vector<int32_t> in_flight_bounds(const AsyncOrderInput& in, const StageReplicas& replicas) {
  std::vector<int32_t> bounds;
  for (int32_t s = 0; s < in.stages; ++s) bounds.push_back(replicas.in_flight(s));
  if (!replicas.replicated()) return bounds;
  const auto transfer = [&](int32_t cut) {
    return cut < static_cast<int32_t>(in.transfer_s.size()) ? in.transfer_s[cut] : 0.0;
  };
  double period = 0;
  for (int32_t s = 0; s < in.stages; ++s) {
    const int32_t r = replicas.replicas(s);
    period = std::max(period, (in.forward_s[s] + in.backward_s[s] + in.update_s[s]) / r);
    if (s + 1 < in.stages) {
      period = std::max(period, transfer(s) / std::min(r, replicas.replicas(s + 1)));
    }
  }
  double downstream = 0;  // how long a microbatch stays at the next stage
  for (int32_t s = in.stages - 1; s >= 0; --s) {
    const double round_trip =
        in.forward_s[s] + in.backward_s[s] + (s + 1 < in.stages ? 2 * transfer(s) + downstream : 0);
    const double cycle = replicas.replicas(s) * period;
    int32_t needed = bounds[s];
    if (cycle > 0) {
      // Less a hair, so that a round trip of exactly n cycles needs n, not n + 1.
      needed = std::max(needed, static_cast<int32_t>(std::ceil(round_trip / cycle * (1 - 1e-12))));
    }
    downstream = needed * cycle;
    bounds[s] = needed + 1;
  }
  return bounds;
}

// One update of a replicated stage: its replicas' backwards that it covers (one each),
// their all-reduce, then an OPTIM on every replica.
struct Round {
  int32_t members = 0;
  int32_t arrived = 0;            // backwards done
  int32_t applied = 0;            // OPTIMs placed
  double ready = 0;               // when the last backward ends
  double reduced = kNever;        // when the all-reduce ends, once every backward is in
  double applied_end = 0;         // when the last OPTIM ends
  int32_t closes_iteration = -1;  // the iteration whose last microbatch it covers
};

// An update a replica owes: its round, and the backward it follows.
struct Owed {
  int32_t round = 0;
  int32_t iteration = 0;
  int32_t microbatch = 0;
};

class AsyncScheduler {
 public:
  explicit AsyncScheduler(const AsyncOrderInput& in)
      : in_(in),
        replicas_(StageReplicas::of(in.replicas, in.stages)),
        total_(in.microbatches * in.iterations),
        fwd_end_(in.stages, std::vector<double>(total_, kNever)),
        bwd_end_(in.stages, std::vector<double>(total_, kNever)),
        update_end_(in.iterations, kNever),
        next_fwd_(replicas_.devices(), 0),
        next_bwd_(replicas_.devices(), 0),
        free_at_(replicas_.devices(), 0),
        owed_(replicas_.devices()),
        rounds_(in.stages),
        collective_free_(in.stages, 0),
        in_flight_(in_flight_bounds(in, replicas_)),
        order_(replicas_.devices()) {
    for (int32_t s = 0; s < in.stages; ++s) {
      for (int32_t k = 0; k < replicas_.replicas(s); ++k) {
        stage_of_.push_back(s);
        replica_of_.push_back(k);
      }
    }
  }

  RunOrder run() && {
    const int64_t compute_actions = 2LL * in_.stages * total_;
    for (int64_t done = 0; done < compute_actions || owed_updates_ > 0;) {
      int32_t best = -1;
      Op best_op = Op::kFwd;
      double best_start = kNever;
      for (int32_t d = 0; d < replicas_.devices(); ++d) {
        // Whichever can start first; on a tie an owed update (it retires a version), then
        // a backward (it frees a stash).
        for (const Op op : {Op::kOptim, Op::kBwd, Op::kFwd}) {
          const double ready = op == Op::kOptim ? update_ready(d)
                               : op == Op::kBwd ? backward_ready(d)
                                                : forward_ready(d);
          if (ready == kNever) continue;
          const double start = std::max(ready, free_at_[d]);
          if (start < best_start) best = d, best_op = op, best_start = start;
        }
      }
      if (best < 0) throw std::logic_error("asynchronous pipeline order is stuck");
      if (best_op == Op::kOptim) {
        apply_update(best, best_start);
      } else {
        schedule(best, best_op == Op::kBwd, best_start);
        ++done;
      }
    }
    return std::move(order_);
  }

 private:
  int32_t iteration_of(int32_t j) const { return j / in_.microbatches; }
  // The n-th microbatch of device d's stage that d runs (round robin), or total_.
  int32_t microbatch_of(int32_t d, int32_t n) const {
    const int64_t j = static_cast<int64_t>(n) * replicas_.replicas(stage_of_[d]) + replica_of_[d];
    return j < total_ ? static_cast<int32_t>(j) : total_;
  }

  double forward_ready(int32_t d) const {
    const int32_t s = stage_of_[d];
    const int32_t j = microbatch_of(d, next_fwd_[d]);
    if (j >= total_ || next_fwd_[d] - next_bwd_[d] >= in_flight_[s]) return kNever;
    double ready = s == 0 ? 0 : fwd_end_[s - 1][j] + transfer(s - 1);
    if (s == 0) {
      const int32_t t = iteration_of(j), m = j % in_.microbatches;
      if (in_.max_staleness >= 0 && t >= 1 && m >= in_.max_staleness) {
        ready = std::max(ready, update_end_[t - 1]);
      }
      const int32_t n = in_.max_in_flight_iterations;
      if (n >= 1 && t >= n) ready = std::max(ready, update_end_[t - n]);
    }
    return ready;
  }

  double backward_ready(int32_t d) const {
    if (next_bwd_[d] >= next_fwd_[d]) return kNever;  // its forward has not run here yet
    // One all-reduce at a time per replica: it applies an update before it computes the
    // gradients of the next (so weights never fall more than one update behind for it).
    if (!owed_[d].empty()) return kNever;
    const int32_t s = stage_of_[d];
    const int32_t j = microbatch_of(d, next_bwd_[d]);
    return s + 1 < in_.stages ? std::max(bwd_end_[s + 1][j] + transfer(s), fwd_end_[s][j])
                              : fwd_end_[s][j];
  }

  // The oldest update device d owes, once its round's all-reduce has ended.
  double update_ready(int32_t d) const {
    if (owed_[d].empty()) return kNever;
    return rounds_[stage_of_[d]].at(owed_[d].front().round).reduced;
  }

  double transfer(int32_t cut) const {
    return cut < static_cast<int32_t>(in_.transfer_s.size()) ? in_.transfer_s[cut] : 0;
  }

  // Whether the replicas of stage s update together, after an all-reduce among them.
  bool synchronised(int32_t s) const {
    return replicas_.replicas(s) > 1 && s < static_cast<int32_t>(in_.allreduce_s.size()) &&
           in_.allreduce_s[s] >= 0;
  }

  void schedule(int32_t d, bool backward, double start) {
    const int32_t s = stage_of_[d];
    const int32_t j = microbatch_of(d, backward ? next_bwd_[d]++ : next_fwd_[d]++);
    const int32_t t = iteration_of(j), m = j % in_.microbatches;
    double end = start + (backward ? in_.backward_s[s] : in_.forward_s[s]);
    (backward ? bwd_end_ : fwd_end_)[s][j] = end;
    order_[d].push_back({t, {backward ? Op::kBwd : Op::kFwd, s, m}});
    // Once per iteration, an update follows each replica's last backward of it.
    const bool last_of_iteration = m == in_.microbatches - 1;
    const bool updates =
        backward && (in_.update_every_microbatch || m + replicas_.replicas(s) >= in_.microbatches);
    free_at_[d] = end;
    if (!updates) return;
    if (synchronised(s)) {
      join_round(d, j, end);
      return;
    }
    order_[d].push_back({t, {Op::kOptim, s, m}});
    free_at_[d] = end + in_.update_s[s];
    if (s == 0 && last_of_iteration) update_end_[t] = free_at_[d];
  }

  // A replica of a replicated stage goes on computing while its update's all-reduce waits
  // for the other replicas' backwards and runs; it applies the update (OPTIM) before
  // whatever it would start after the all-reduce has ended.
  void join_round(int32_t d, int32_t j, double bwd_end) {
    const int32_t s = stage_of_[d];
    const int32_t r = replicas_.replicas(s);
    const int32_t key = in_.update_every_microbatch ? j / r : iteration_of(j);
    Round& round = rounds_[s][key];
    round.members =
        in_.update_every_microbatch ? std::min(r, total_ - key * r) : std::min(r, in_.microbatches);
    ++round.arrived;
    round.ready = std::max(round.ready, bwd_end);
    if (j % in_.microbatches == in_.microbatches - 1) round.closes_iteration = iteration_of(j);
    owed_[d].push_back({key, iteration_of(j), j % in_.microbatches});
    ++owed_updates_;
    if (round.arrived < round.members) return;
    // A stage's all-reduces run one after the other on its replicas' collective lanes.
    round.reduced = std::max(round.ready, collective_free_[s]) + in_.allreduce_s[s];
    collective_free_[s] = round.reduced;
  }

  void apply_update(int32_t d, double start) {
    const int32_t s = stage_of_[d];
    const Owed owed = owed_[d].front();
    owed_[d].pop_front();
    --owed_updates_;
    order_[d].push_back({owed.iteration, {Op::kOptim, s, owed.microbatch}});
    free_at_[d] = start + in_.update_s[s];
    Round& round = rounds_[s].at(owed.round);
    round.applied_end = std::max(round.applied_end, free_at_[d]);
    if (++round.applied < round.members) return;
    if (s == 0 && round.closes_iteration >= 0) {
      update_end_[round.closes_iteration] = round.applied_end;
    }
    rounds_[s].erase(owed.round);
  }

  const AsyncOrderInput& in_;
  StageReplicas replicas_;
  int32_t total_;
  std::vector<int32_t> stage_of_, replica_of_;          // per device
  std::vector<std::vector<double>> fwd_end_, bwd_end_;  // [stage][microbatch of the run]
  std::vector<double> update_end_;                      // stage 0, per iteration
  std::vector<int32_t> next_fwd_, next_bwd_;            // per device: its microbatches so far
  std::vector<double> free_at_;                         // per device
  std::vector<std::deque<Owed>> owed_;                  // per device, oldest first
  int64_t owed_updates_ = 0;
  std::vector<std::map<int32_t, Round>> rounds_;  // per stage: rounds not yet applied
  std::vector<double> collective_free_;           // per stage
  std::vector<int32_t> in_flight_;                // per stage: per replica, at most
  RunOrder order_;
};

}  // namespace

RunOrder async_run_order(const AsyncOrderInput& input) { return AsyncScheduler(input).run(); }

}  // namespace pipetwin
