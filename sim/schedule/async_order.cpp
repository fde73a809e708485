#include "sim/schedule/async_order.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace pipetwin {
namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();

class AsyncScheduler {
 public:
  explicit AsyncScheduler(const AsyncOrderInput& in)
      : in_(in),
        total_(in.microbatches * in.iterations),
        fwd_end_(in.stages, std::vector<double>(total_, kNever)),
        bwd_end_(in.stages, std::vector<double>(total_, kNever)),
        update_end_(in.iterations, kNever),
        next_fwd_(in.stages, 0),
        next_bwd_(in.stages, 0),
        free_at_(in.stages, 0),
        order_(in.stages) {}

  RunOrder run() && {
    for (int64_t step = 0; step < 2LL * in_.stages * total_; ++step) {
      int32_t best = -1;
      bool best_backward = false;
      double best_start = kNever;
      for (int32_t s = 0; s < in_.stages; ++s) {
        // Whichever can start first; a backward on a tie (it frees a stash).
        for (const bool backward : {true, false}) {
          const double ready = backward ? backward_ready(s) : forward_ready(s);
          if (ready == kNever) continue;
          const double start = std::max(ready, free_at_[s]);
          if (start < best_start) best = s, best_backward = backward, best_start = start;
        }
      }
      if (best < 0) throw std::logic_error("asynchronous pipeline order is stuck");
      schedule(best, best_backward, best_start);
    }
    return std::move(order_);
  }

 private:
  int32_t iteration_of(int32_t g) const { return g / in_.microbatches; }

  double forward_ready(int32_t s) const {
    const int32_t g = next_fwd_[s];
    if (g >= total_ || g - next_bwd_[s] >= in_.stages - s) return kNever;
    double ready = s == 0 ? 0 : fwd_end_[s - 1][g] + transfer(s - 1);
    if (s == 0) {
      const int32_t t = iteration_of(g), j = g % in_.microbatches;
      if (in_.max_staleness >= 0 && t >= 1 && j >= in_.max_staleness) {
        ready = std::max(ready, update_end_[t - 1]);
      }
      const int32_t n = in_.max_in_flight_iterations;
      if (n >= 1 && t >= n) ready = std::max(ready, update_end_[t - n]);
    }
    return ready;
  }

  double backward_ready(int32_t s) const {
    const int32_t g = next_bwd_[s];
    if (g >= next_fwd_[s]) return kNever;  // its forward has not run here yet
    return s + 1 < in_.stages ? std::max(bwd_end_[s + 1][g] + transfer(s), fwd_end_[s][g])
                              : fwd_end_[s][g];
  }

  double transfer(int32_t cut) const {
    return cut < static_cast<int32_t>(in_.transfer_s.size()) ? in_.transfer_s[cut] : 0;
  }

  void schedule(int32_t s, bool backward, double start) {
    const int32_t g = backward ? next_bwd_[s]++ : next_fwd_[s]++;
    const int32_t t = iteration_of(g), m = g % in_.microbatches;
    double end = start + (backward ? in_.backward_s[s] : in_.forward_s[s]);
    (backward ? bwd_end_ : fwd_end_)[s][g] = end;
    order_[s].push_back({t, {backward ? Op::kBwd : Op::kFwd, s, m}});
    const bool last_of_iteration = m == in_.microbatches - 1;
    if (backward && (in_.update_every_microbatch || last_of_iteration)) {
      order_[s].push_back({t, {Op::kOptim, s, m}});
      end += in_.update_s[s];
      if (s == 0 && last_of_iteration) update_end_[t] = end;
    }
    free_at_[s] = end;
  }

  const AsyncOrderInput& in_;
  int32_t total_;
  std::vector<std::vector<double>> fwd_end_, bwd_end_;  // [stage][global microbatch]
  std::vector<double> update_end_;                      // stage 0, per iteration
  std::vector<int32_t> next_fwd_, next_bwd_;
  std::vector<double> free_at_;
  RunOrder order_;
};

}  // namespace

RunOrder async_run_order(const AsyncOrderInput& input) { return AsyncScheduler(input).run(); }

}  // namespace pipetwin
