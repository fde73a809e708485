#include "sim/schedule/lowering_transfers.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>
#include <unordered_map>

namespace pipetwin {
namespace {

// Indices [first, last) of the ranges (sorted, disjoint) that overlap `r`.
std::pair<int32_t, int32_t> overlapping(const std::vector<SampleRange>& ranges, SampleRange r) {
  const auto first = std::partition_point(ranges.begin(), ranges.end(),
                                          [&](const SampleRange& x) { return x.hi <= r.lo; });
  auto last = first;
  while (last != ranges.end() && last->lo < r.hi) ++last;
  return {static_cast<int32_t>(first - ranges.begin()),
          static_cast<int32_t>(last - ranges.begin())};
}

// Transfers and the production times: a forward's activations or a backward's input
// gradient, whether or not the backward is split.
Op direction(Op op) { return op == Op::kFwd ? Op::kFwd : Op::kBwd; }

// Key of one transfer: iteration, replica, direction, producing stage and microbatch,
// consuming microbatch.
using Key = std::tuple<int32_t, int32_t, Op, int32_t, int32_t, int32_t>;
// Every transfer passes through the table of open ends twice: a hash table, not a tree,
// whose inserts, erases and rebalancing showed high in the lowering's profile.
struct KeyHash {
  size_t operator()(const Key& k) const {
    uint64_t h = 0x9e3779b97f4a7c15ull;
    const auto mix = [&h](uint64_t v) { h = (h ^ v) * 0xff51afd7ed558ccdull; };
    mix(static_cast<uint32_t>(std::get<0>(k)));
    mix(static_cast<uint32_t>(std::get<1>(k)));
    mix(static_cast<uint64_t>(std::get<2>(k)));
    mix(static_cast<uint32_t>(std::get<3>(k)));
    mix(static_cast<uint32_t>(std::get<4>(k)));
    mix(static_cast<uint32_t>(std::get<5>(k)));
    return static_cast<size_t>(h ^ (h >> 32));
  }
};

class TransferPass {
 public:
  TransferPass(const LoweringContext& context, ProgramBuilder& builder, const ComputeOrder& order,
               const ProductionTimes& production_times)
      : context_(context), builder_(builder) {
    for (size_t d = 0; d < production_times.size(); ++d) {
      for (size_t k = 0; k < production_times[d].size(); ++k) {
        const ComputeAction& a = order[d][k];
        if (a.op == Op::kBwdWeight) continue;  // produces nothing another stage needs
        produced_at_[{direction(a.op), a.stage, a.microbatch}] = production_times[d][k];
      }
    }
  }

  void run(const LoweredCompute& compute) {
    int32_t round = compute.lanes.empty() ? 0 : compute.lanes.front().round;
    for (const LaneSteps& lane : compute.lanes) {
      if (lane.round != round) post_deferred_receives();
      round = lane.round;
      for (const Step& step : lane.steps) {
        if (step.action.op == Op::kOptim) continue;
        connect(lane.replica, step.action, compute.ids[lane.replica][step.iteration],
                step.iteration);
      }
    }
    post_deferred_receives();
  }

 private:
  // A RECV, the compute op that consumes it, and its transfer's key.
  struct Receive {
    Instruction recv;
    int32_t consumer;
    Key key;
  };

  // Wires one compute action to what it consumes (RECVs before it, in this device's
  // consumption order) and what it produces (SENDs after it, in production order).
  void connect(int32_t r, const ComputeAction& a, const ComputeIds& ids, int32_t it) {
    if (a.op == Op::kBwdWeight) {  // compute only, after the input gradient of its samples
      builder_.add_dependency(ids.bwd_weight[a.stage][a.microbatch],
                              ids.bwd[a.stage][a.microbatch]);
      return;
    }
    const bool fwd = a.op == Op::kFwd;
    const auto& produced = fwd ? ids.fwd : ids.bwd;
    const int32_t self = produced[a.stage][a.microbatch];
    const SampleRange mine = context_.ranges(a.op, a.stage)[a.microbatch];
    const int32_t stages = context_.num_stages();
    const int32_t upstream = fwd ? a.stage - 1 : a.stage + 1;  // who feeds this action
    if (upstream >= 0 && upstream < stages) {
      const auto& theirs = context_.ranges(a.op, upstream);
      const auto [first, last] = overlapping(theirs, mine);
      for (int32_t k = first; k < last; ++k) {
        consume(r, produced[upstream][k], self, upstream, k, a, theirs[k].intersect(mine), it);
      }
    }
    if (!fwd) {  // the backward needs its own stage's forward of the same samples
      const auto [first, last] = overlapping(context_.layout().fwd_ranges[a.stage], mine);
      for (int32_t k = first; k < last; ++k) builder_.add_dependency(self, ids.fwd[a.stage][k]);
    }
    const int32_t downstream = fwd ? a.stage + 1 : a.stage - 1;  // who this action feeds
    if (downstream >= 0 && downstream < stages) {
      const auto& theirs = context_.ranges(a.op, downstream);
      const auto [first, last] = overlapping(theirs, mine);
      for (int32_t j = first; j < last; ++j) {
        produce(r, self, a, downstream, j, theirs[j].intersect(mine), it);
      }
    }
  }

  Instruction transfer(Op op, int32_t from, int32_t to, int32_t stage, int32_t microbatch,
                       SampleRange piece, int32_t cut_stage, int32_t it) const {
    const StageCost& cut = context_.layout().costs[cut_stage];
    Instruction t;
    t.op = op;
    t.device = from;
    t.peer_device = to;
    t.stage = stage;
    t.microbatch = microbatch;
    t.range = piece;
    t.iteration = it;
    const bool useless_gradient = (op == Op::kSendGrad || op == Op::kRecvGrad) && !cut.trains;
    t.bytes = useless_gradient ? 0 : std::llround(cut.output_bytes_per_sample * piece.size());
    return t;
  }

  void consume(int32_t r, int32_t producer, int32_t self, int32_t upstream, int32_t k,
               const ComputeAction& a, SampleRange piece, int32_t it) {
    const int32_t from = context_.device(r, upstream, it, k);
    const int32_t to = context_.device(r, a.stage, it, a.microbatch);
    if (from == to) {
      builder_.add_dependency(self, producer);
      return;
    }
    const bool fwd = a.op == Op::kFwd;
    const int32_t cut = fwd ? upstream : a.stage;  // the stage whose output crosses
    Receive receive{transfer(fwd ? Op::kRecvAct : Op::kRecvGrad, to, from, a.stage,
                             context_.global_microbatch(r, a.op, upstream, k),
                             context_.on_replica(r, piece), cut, it),
                    self, Key{it, r, direction(a.op), upstream, k, a.microbatch}};
    if (produced_at_.empty()) return emit(receive);
    // Posted in production order, once the whole round is known.
    deferred_.emplace_back(produced_at_.at({direction(a.op), upstream, k}), std::move(receive));
  }

  void produce(int32_t r, int32_t self, const ComputeAction& a, int32_t downstream, int32_t j,
               SampleRange piece, int32_t it) {
    const int32_t from = context_.device(r, a.stage, it, a.microbatch);
    const int32_t to = context_.device(r, downstream, it, j);
    if (from == to) return;  // consume() adds the plain dependency
    const bool fwd = a.op == Op::kFwd;
    const int32_t cut = fwd ? a.stage : downstream;
    const int32_t send =
        builder_.add(transfer(fwd ? Op::kSendAct : Op::kSendGrad, from, to, a.stage,
                              context_.global_microbatch(r, a.op, a.stage, a.microbatch),
                              context_.on_replica(r, piece), cut, it));
    builder_.add_dependency(send, self);
    match(Key{it, r, direction(a.op), a.stage, a.microbatch, j}, send, /*is_send=*/true);
  }

  void emit(const Receive& receive) {
    const int32_t recv = builder_.add(receive.recv);
    builder_.add_dependency(receive.consumer, recv);
    match(receive.key, recv, /*is_send=*/false);
  }

  void post_deferred_receives() {
    std::stable_sort(deferred_.begin(), deferred_.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
    for (const auto& [time, receive] : deferred_) emit(receive);
    deferred_.clear();
  }

  // Pairs a transfer's end with the other one once both are emitted.
  void match(const Key& key, int32_t id, bool is_send) {
    auto [it, inserted] = open_.try_emplace(key, id);
    if (inserted) return;
    if (is_send) {
      builder_.pair(id, it->second);
    } else {
      builder_.pair(it->second, id);
    }
    open_.erase(it);
  }

  const LoweringContext& context_;
  ProgramBuilder& builder_;
  std::unordered_map<Key, int32_t, KeyHash> open_;  // transfers whose other end is not emitted yet
  // With production times: (direction, stage, microbatch) -> when its output is ready, and
  // the round's RECVs waiting to be posted in that order.
  std::map<std::tuple<Op, int32_t, int32_t>, double> produced_at_;
  std::vector<std::pair<double, Receive>> deferred_;
};

}  // namespace

void add_transfers(const LoweringContext& context, const LoweredCompute& compute,
                   ProgramBuilder& builder, const ComputeOrder& order,
                   const ProductionTimes& production_times) {
  TransferPass(context, builder, order, production_times).run(compute);
}

}  // namespace pipetwin
