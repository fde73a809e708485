#include "sim/umpipe/plan_evaluator.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <stdexcept>
#include <thread>

#include "sim/driver/build_program.h"
#include "sim/network/point_to_point.h"

namespace pipetwin {
namespace {

// Walks the pieces of one stage boundary: the overlaps of the producer's microbatches
// (sizes `from`, end times `from_end`) with the consumer's (sizes `to`), in sample order.
// Each piece is a SEND on the producer's send lane and a RECV on the consumer's recv lane,
// the pair starting when both lanes may: `lane_ready` for the first piece (the lanes'
// previous transfers plus the issue gap), the previous piece's end plus the issue gap after
// that, and never before its producer ended plus the wake-up gap. Each consumer microbatch's
// compute (`to_cost[j]` seconds) starts when its last piece has arrived (plus the wake-up
// gap) and its compute lane may: `compute_ready` for the first, the previous end plus the
// issue gap after that (the dependency walk's rules, sim/program/dependency_walk.h). Writes
// the consumer's end times and returns the chain's last transfer end.
double run_boundary(const std::vector<int32_t>& from, const double* from_end,
                    const std::vector<int32_t>& to, const double* transfer, const double* to_cost,
                    double lane_ready, double compute_ready, const DispatchSpec& gaps,
                    double* to_end) {
  double t = 0;
  size_t k = 0, j = 0;
  int32_t k_end = from[0], j_end = to[0], pos = 0;
  while (j < to.size()) {
    const int32_t piece_end = std::min(k_end, j_end);
    t = std::max(lane_ready, from_end[k] + gaps.wakeup_s) + transfer[piece_end - pos];
    lane_ready = t + gaps.issue_s;
    pos = piece_end;
    if (k_end == pos && ++k < from.size()) k_end += from[k];
    if (j_end == pos) {
      to_end[j] = std::max(compute_ready, t + gaps.wakeup_s) + to_cost[j];
      compute_ready = to_end[j] + gaps.issue_s;
      if (++j < to.size()) j_end += to[j];
    }
  }
  return t;
}

}  // namespace

PlanEvaluator::PlanEvaluator(const ResolvedScenario& setup) {
  if (setup.training.data_parallel != 1 || setup.schedule.virtual_stages != 1) {
    throw std::invalid_argument("the UMPIPE evaluator needs one pipeline without virtual stages");
  }
  const PipelineLayout layout = make_layout(setup, place_layers(setup));
  stages_ = static_cast<int32_t>(layout.costs.size());
  batch_ = setup.training.global_batch;
  gaps_ = setup.cluster.dispatch;
  for (const StageCost& cost : layout.costs) optim_.push_back(cost.optim_s);
  fwd_.resize(static_cast<size_t>(stages_) * (batch_ + 1));
  bwd_.resize(fwd_.size());
  transfer_.resize(fwd_.size());
  for (int32_t s = 0; s < stages_; ++s) {
    const StageCost& cost = layout.costs[s];
    const LinkSpec& link =
        s + 1 < stages_ ? setup.cluster.link(layout.stage_device[s], layout.stage_device[s + 1])
                        : setup.cluster.intra_node;
    for (int32_t b = 0; b <= batch_; ++b) {
      const size_t i = static_cast<size_t>(s) * (batch_ + 1) + b;
      // The same expressions as lowering and the analytic executor: bit-equal times.
      fwd_[i] = cost.fwd.seconds(b);
      bwd_[i] = cost.bwd.seconds(b);
      transfer_[i] = transfer_seconds(
          link, static_cast<double>(std::llround(cost.output_bytes_per_sample * b)));
    }
  }
}

double PlanEvaluator::iteration_time(const UnequalPlan& plan) const {
  const int32_t K = stages_;
  // Per stage: end times of forwards and backwards, and the last forward transfer on the
  // boundary after it (what its send lane and the next recv lane did last).
  thread_local std::vector<std::vector<double>> fwd_end, bwd_end;
  thread_local std::vector<double> last_fwd_transfer, cost;
  thread_local std::vector<SampleRange> forward_ranges;
  fwd_end.resize(K);
  bwd_end.resize(K);
  last_fwd_transfer.assign(K, 0.0);

  const double issue = gaps_.issue_s;
  for (int32_t s = 0; s < K; ++s) {
    const auto& sizes = plan.stages[s].forward_sizes;
    fwd_end[s].resize(sizes.size());
    if (s == 0) {
      double ready = 0;  // the compute lane's first op: no issue gap before it
      const double* f = row(fwd_, 0);
      for (size_t j = 0; j < sizes.size(); ++j) {
        fwd_end[0][j] = ready + f[sizes[j]];
        ready = fwd_end[0][j] + issue;
      }
      continue;
    }
    const double* f = row(fwd_, s);
    cost.resize(sizes.size());
    for (size_t j = 0; j < sizes.size(); ++j) cost[j] = f[sizes[j]];
    // The boundary's lanes and the stage's compute lane start with these transfers and
    // forwards.
    last_fwd_transfer[s - 1] =
        run_boundary(plan.stages[s - 1].forward_sizes, fwd_end[s - 1].data(), sizes,
                     row(transfer_, s - 1), cost.data(), 0.0, 0.0, gaps_, fwd_end[s].data());
  }

  double makespan = 0;
  for (int32_t s = K - 1; s >= 0; --s) {
    const auto& sizes = plan.stages[s].backward_sizes;
    bwd_end[s].resize(sizes.size());
    // The backwards follow the stage's forwards on its compute lane.
    const double compute_ready = fwd_end[s].back() + issue;
    // Each backward pays for the forward graphs it walks (backward_through_forwards).
    const double* g = row(bwd_, s);
    const auto& forward_sizes = plan.stages[s].forward_sizes;
    forward_ranges.clear();
    for (int32_t lo = 0; int32_t size : forward_sizes) forward_ranges.push_back({lo, lo += size});
    cost.resize(sizes.size());
    for (int32_t lo = 0, j = 0; j < static_cast<int32_t>(sizes.size()); ++j) {
      cost[j] = backward_through_forwards({lo, lo + sizes[j]}, forward_ranges,
                                          [g](int32_t size) { return g[size]; });
      lo += sizes[j];
    }
    if (s == K - 1) {
      double ready = compute_ready;
      for (size_t j = 0; j < sizes.size(); ++j) {
        bwd_end[s][j] = ready + cost[j];
        ready = bwd_end[s][j] + issue;
      }
    } else {
      // The first gradient waits for the sender's send lane (its last activation sent,
      // if any) and the receiver's recv lane (its last activation received, if any).
      double lane_ready = 0;
      if (s + 2 < K) lane_ready = std::max(lane_ready, last_fwd_transfer[s + 1] + issue);
      if (s >= 1) lane_ready = std::max(lane_ready, last_fwd_transfer[s - 1] + issue);
      run_boundary(plan.stages[s + 1].backward_sizes, bwd_end[s + 1].data(), sizes,
                   row(transfer_, s), cost.data(), lane_ready, compute_ready, gaps_,
                   bwd_end[s].data());
    }
    // The stage's update follows its last backward on the compute lane.
    makespan = std::max(makespan, bwd_end[s].back() + issue + optim_[s]);
  }
  return makespan;
}

void PlanEvaluator::evaluate(std::span<const UnequalPlan> population, std::span<double> seconds,
                             int threads) const {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  threads = std::min<int>(threads, static_cast<int>(population.size()));
  if (threads <= 1) {
    for (size_t i = 0; i < population.size(); ++i) seconds[i] = iteration_time(population[i]);
    return;
  }
  // Dynamic chunks: plans differ in length, so static halves would leave a thread idle.
  std::atomic<size_t> next{0};
  constexpr size_t kChunk = 16;
  auto work = [&] {
    for (size_t begin; (begin = next.fetch_add(kChunk)) < population.size();) {
      const size_t end = std::min(begin + kChunk, population.size());
      for (size_t i = begin; i < end; ++i) seconds[i] = iteration_time(population[i]);
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
}

double PlanEvaluator::stage_seconds_per_sample(int32_t stage, int32_t b) const {
  return (row(fwd_, stage)[b] + row(bwd_, stage)[b]) / b;
}

}  // namespace pipetwin
