#include "sim/schedule/lowering.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <tuple>
#include <unordered_map>

#include "sim/spec/stage_replicas.h"
#include "sim/spec/unequal_plan.h"

namespace pipetwin {
namespace {

// The instructions of one weight update.
struct Update {
  int32_t allreduce = -1;  // with replicas
  int32_t optim = -1;
};

// Compute instruction ids of one replica and iteration: [stage][microbatch]. `bwd` holds
// the BWDs, or of split backwards the BWD_INPUTs, and `bwd_weight` their BWD_WEIGHTs.
struct ComputeIds {
  std::vector<std::vector<int32_t>> fwd, bwd, bwd_weight;
  // [stage][replica of the stage], in compute order: the last op the update waits for, BWD
  // or BWD_WEIGHT.
  std::vector<std::vector<int32_t>> last_bwd;
};

// The table of an op's ids.
std::vector<std::vector<int32_t>>& ids_of(ComputeIds& ids, Op op) {
  return op == Op::kFwd ? ids.fwd : op == Op::kBwdWeight ? ids.bwd_weight : ids.bwd;
}
const std::vector<std::vector<int32_t>>& ids_of(const ComputeIds& ids, Op op) {
  return op == Op::kFwd ? ids.fwd : op == Op::kBwdWeight ? ids.bwd_weight : ids.bwd;
}

// Indices [first, last) of the ranges (sorted, disjoint) that overlap `r`.
std::pair<int32_t, int32_t> overlapping(const std::vector<SampleRange>& ranges, SampleRange r) {
  const auto first = std::partition_point(ranges.begin(), ranges.end(),
                                          [&](const SampleRange& x) { return x.hi <= r.lo; });
  auto last = first;
  while (last != ranges.end() && last->lo < r.hi) ++last;
  return {static_cast<int32_t>(first - ranges.begin()),
          static_cast<int32_t>(last - ranges.begin())};
}

bool ranges_differ(const PipelineLayout& layout) {
  const auto& reference = layout.fwd_ranges.front();
  for (size_t s = 0; s < layout.fwd_ranges.size(); ++s) {
    if (layout.fwd_ranges[s] != reference || layout.bwd_ranges[s] != reference) return true;
  }
  const int32_t first = reference.front().size();
  for (const SampleRange& r : reference) {
    if (r.size() != first) return true;
  }
  return false;
}

class Lowering {
 public:
  // `run_wide`: replicated stages number microbatches over the run, not per iteration.
  Lowering(const PipelineLayout& layout, const ComputeOrder& order, int32_t iterations,
           bool run_wide, const ProductionTimes& production_times = {})
      : layout_(layout),
        order_(order),
        iterations_(iterations),
        num_stages_(static_cast<int32_t>(layout.stage_device.size())),
        replica_batch_(layout.global_batch / layout.replicas),
        stage_replicas_(StageReplicas::of(layout.stage_replicas, num_stages_)),
        run_wide_(run_wide),
        builder_(layout.num_devices, num_stages_, iterations, layout.global_batch) {
    for (size_t d = 0; d < production_times.size(); ++d) {
      for (size_t k = 0; k < production_times[d].size(); ++k) {
        const ComputeAction& a = order[d][k];
        if (a.op == Op::kBwdWeight) continue;  // produces nothing another stage needs
        produced_at_[{direction(a.op), a.stage, a.microbatch}] = production_times[d][k];
      }
    }
  }

  Program run() && {
    // Each compute action brings at most one SEND and one RECV with it on a straight
    // pipeline (more only where stages cut the batch differently), and about as many
    // dependencies as instructions.
    int64_t actions = 0;
    for (const auto& device_order : order_) actions += static_cast<int64_t>(device_order.size());
    const int64_t per_iteration = layout_.replicas * (3 * actions + 2 * num_stages_);
    builder_.reserve(per_iteration * iterations_, 2 * per_iteration * iterations_);
    for (int32_t it = 0; it < iterations_; ++it) {
      std::vector<ComputeIds> ids;
      for (int32_t r = 0; r < layout_.replicas; ++r) ids.push_back(emit_compute(r, it));
      for (int32_t r = 0; r < layout_.replicas; ++r) {
        for (const auto& device_order : order_) {
          for (const ComputeAction& a : device_order) connect(r, a, ids[r], it);
        }
        emit_deferred_receives();
        if (!layout_.offload_fraction.empty()) emit_offload(r, ids[r], it);
      }
      emit_updates(ids, it);
    }
    return std::move(*this).finish();
  }

  // Asynchronous pipelines: each device's order spans the run, updates included; the
  // transfers follow it on each device, so lanes interleave iterations as compute does.
  // Every replica runs the same order on its slice of the batch; with replicas, each
  // update waits for an ALLREDUCE of its stage's gradients across them.
  Program run_over_iterations(const RunOrder& run, bool update_every_microbatch) && {
    std::vector<std::vector<ComputeIds>> ids(layout_.replicas,
                                             std::vector<ComputeIds>(iterations_, empty_ids()));
    // Per stage and update in its devices' order: the update's ALLREDUCE on each replica
    // (a replicated stage's replicas update together, the n-th update of each).
    std::vector<std::vector<std::vector<int32_t>>> reductions(num_stages_);
    // Per replica and device: its compute lane, OPTIMs included (for offload).
    std::vector<std::vector<std::vector<Step>>> lanes(layout_.replicas,
                                                      std::vector<std::vector<Step>>(run.size()));
    for (int32_t r = 0; r < layout_.replicas; ++r) {
      for (size_t d = 0; d < run.size(); ++d) {
        int32_t update = 0;
        for (const RunAction& ra : run[d]) {
          ComputeIds& at = ids[r][ra.iteration];
          if (ra.action.op != Op::kOptim) {
            add_compute(r, ra.action, ra.iteration, at);
            const auto& table = ids_of(at, ra.action.op);
            lanes[r][d].push_back(
                {ra.action, ra.iteration, table[ra.action.stage][ra.action.microbatch]});
            continue;
          }
          const Update u = emit_async_update(r, ra, ids[r], update_every_microbatch);
          lanes[r][d].push_back({ra.action, ra.iteration, u.optim});
          auto& stage_reductions = reductions[ra.action.stage];
          if (stage_reductions.size() <= static_cast<size_t>(update)) {
            stage_reductions.emplace_back();
          }
          if (u.allreduce >= 0) stage_reductions[update].push_back(u.allreduce);
          ++update;
        }
      }
    }
    if (!layout_.offload_fraction.empty()) {
      for (int32_t r = 0; r < layout_.replicas; ++r) {
        for (const std::vector<Step>& steps : lanes[r]) emit_copies(r, steps);
      }
    }
    for (const auto& stage_reductions : reductions) {
      for (const auto& group : stage_reductions) {
        if (!group.empty()) builder_.group(group);
      }
    }
    for (int32_t r = 0; r < layout_.replicas; ++r) {
      for (const auto& device_order : run) {
        for (const RunAction& ra : device_order) {
          if (ra.action.op != Op::kOptim) connect(r, ra.action, ids[r][ra.iteration], ra.iteration);
        }
      }
    }
    return std::move(*this).finish();
  }

 private:
  // Where replica `replica` of the pipeline runs `stage` (its first device when the stage
  // is replicated).
  int32_t stage_base(int32_t replica, int32_t stage) const {
    return layout_.stage_device[stage] + replica * layout_.devices_per_replica;
  }
  // Which of the stage's replicas owns its microbatch m of iteration it: round robin.
  int32_t stage_replica(int32_t stage, int32_t it, int32_t m) const {
    if (stage_replicas_.replicas(stage) == 1) return 0;
    const int64_t j = run_wide_ ? static_cast<int64_t>(it) * count(Op::kFwd, stage) + m : m;
    return stage_replicas_.replica_of(stage, j);
  }
  int32_t device(int32_t replica, int32_t stage, int32_t it, int32_t m) const {
    return stage_base(replica, stage) + stage_replica(stage, it, m);
  }
  // A replicated stage's PipeDream update closes a round of r consecutive microbatches,
  // which may span two iterations: all its members carry the iteration of the round's first.
  int32_t update_iteration(int32_t stage, int32_t it, int32_t m,
                           bool update_every_microbatch) const {
    const int32_t r = stage_replicas_.replicas(stage);
    if (r == 1 || !update_every_microbatch) return it;
    const int32_t per_iteration = count(Op::kBwd, stage);
    const int64_t j = static_cast<int64_t>(it) * per_iteration + m;
    return static_cast<int32_t>(j / r * r / per_iteration);
  }
  int32_t count(Op op, int32_t stage) const {
    return static_cast<int32_t>(ranges(op, stage).size());
  }
  const std::vector<SampleRange>& ranges(Op op, int32_t stage) const {
    return op == Op::kFwd ? layout_.fwd_ranges[stage] : layout_.bwd_ranges[stage];
  }
  // Range and global microbatch index of replica r's m-th range.
  SampleRange range(int32_t replica, Op op, int32_t stage, int32_t m) const {
    const SampleRange local = ranges(op, stage)[m];
    return {local.lo + replica * replica_batch_, local.hi + replica * replica_batch_};
  }
  int32_t global_microbatch(int32_t replica, Op op, int32_t stage, int32_t m) const {
    return m + replica * count(op, stage);
  }

  ComputeIds emit_compute(int32_t r, int32_t it) {
    ComputeIds ids = empty_ids();
    for (const auto& device_order : order_) {
      for (const ComputeAction& a : device_order) add_compute(r, a, it, ids);
    }
    return ids;
  }

  ComputeIds empty_ids() const {
    ComputeIds ids;
    ids.fwd.resize(num_stages_);
    ids.bwd.resize(num_stages_);
    ids.bwd_weight.resize(num_stages_);
    ids.last_bwd.resize(num_stages_);
    for (int32_t s = 0; s < num_stages_; ++s) {
      ids.last_bwd[s].assign(stage_replicas_.replicas(s), -1);
      ids.fwd[s].assign(count(Op::kFwd, s), -1);
      ids.bwd[s].assign(count(Op::kBwd, s), -1);
      ids.bwd_weight[s].assign(count(Op::kBwd, s), -1);
    }
    return ids;
  }

  void add_compute(int32_t r, const ComputeAction& a, int32_t it, ComputeIds& ids) {
    const SampleRange samples = range(r, a.op, a.stage, a.microbatch);
    const StageCost& cost = layout_.costs[a.stage];
    Instruction instr;
    instr.op = a.op;
    instr.device = device(r, a.stage, it, a.microbatch);
    instr.stage = a.stage;
    instr.microbatch = global_microbatch(r, a.op, a.stage, a.microbatch);
    instr.range = samples;
    instr.iteration = it;
    const CostCurve& backward = a.op == Op::kBwdInput    ? cost.bwd_input
                                : a.op == Op::kBwdWeight ? cost.bwd_weight
                                                         : cost.bwd;
    instr.compute_s = a.op == Op::kFwd
                          ? cost.fwd.seconds(samples.size())
                          : backward_through_forwards(
                                ranges(Op::kBwd, a.stage)[a.microbatch], ranges(Op::kFwd, a.stage),
                                [&](int32_t size) { return backward.seconds(size); });
    instr.stash_bytes = stash_freed(cost, a.op, samples.size());
    const int32_t id = builder_.add(instr);
    ids_of(ids, a.op)[a.stage][a.microbatch] = id;
    if (computes_weight_gradient(a.op)) {
      ids.last_bwd[a.stage][stage_replica(a.stage, it, a.microbatch)] = id;
    }
  }

  // What a FWD allocates and a BWD frees; a split backward frees it in two parts, the
  // weight gradients' share when BWD_WEIGHT ends and the rest when BWD_INPUT ends.
  static int64_t stash_freed(const StageCost& cost, Op op, int32_t samples) {
    const int64_t whole = std::llround(cost.stash_bytes_per_sample * samples);
    if (op != Op::kBwdInput && op != Op::kBwdWeight) return whole;
    const int64_t weight_share =
        std::min<int64_t>(whole, std::llround(cost.bwd_weight_stash_bytes_per_sample * samples));
    return op == Op::kBwdWeight ? weight_share : whole - weight_share;
  }

  // The weight update closes the iteration on every stage: with replicas, after an
  // ALLREDUCE of the stage's gradients across them.
  Program finish() && {
    builder_.set_static_bytes(layout_.static_bytes);
    builder_.set_stage_device(layout_.stage_device);
    if (stage_replicas_.replicated()) builder_.set_stage_replicas(layout_.stage_replicas);
    builder_.set_model_stage(layout_.model_stage);
    builder_.set_show_ranges(ranges_differ(layout_));
    return std::move(builder_).finish();
  }

  // One collective per model stage: over the pipeline's replicas, the stage's replicas and
  // DualPipe's two copies of it. Emitted model stage by model stage, so that every device's
  // collective lane takes the collectives in one order (DualPipe's devices hold a stage of
  // each half of the model, and would otherwise wait for each other's second collective).
  void emit_updates(const std::vector<ComputeIds>& ids, int32_t it) {
    std::vector<int32_t> stages(num_stages_);
    std::iota(stages.begin(), stages.end(), 0);
    std::stable_sort(stages.begin(), stages.end(),
                     [&](int32_t a, int32_t b) { return model_stage(a) < model_stage(b); });
    std::vector<std::vector<int32_t>> groups(num_stages_);
    for (int32_t s : stages) {
      for (int32_t r = 0; r < layout_.replicas; ++r) {
        for (int32_t k = 0; k < stage_replicas_.replicas(s); ++k) {
          // The lane order already puts the OPTIM after the device's last BWD of the stage.
          const Update u = emit_update(r, stage_base(r, s) + k, s, it, 0,
                                       {r * replica_batch_, (r + 1) * replica_batch_},
                                       ids[r].last_bwd[s][k], /*optim_waits_for_bwd=*/false);
          if (u.allreduce >= 0) groups[model_stage(s)].push_back(u.allreduce);
        }
      }
    }
    for (const std::vector<int32_t>& group : groups) {
      if (!group.empty()) builder_.group(group);
    }
  }
  int32_t model_stage(int32_t s) const {
    return layout_.model_stage.empty() ? s : layout_.model_stage[s];
  }
  // How many stages hold stage s's weights (DualPipe: two).
  int32_t copies(int32_t s) const {
    if (layout_.model_stage.empty()) return 1;
    return static_cast<int32_t>(
        std::count(layout_.model_stage.begin(), layout_.model_stage.end(), model_stage(s)));
  }

  // Replica r's update of an asynchronous run, after the BWD it follows (with
  // update_every_microbatch it covers that microbatch's samples).
  Update emit_async_update(int32_t r, const RunAction& ra, const std::vector<ComputeIds>& ids,
                           bool update_every_microbatch) {
    const int32_t s = ra.action.stage, m = ra.action.microbatch;
    const int32_t on = device(r, s, ra.iteration, m);
    const int32_t it = update_iteration(s, ra.iteration, m, update_every_microbatch);
    return update_every_microbatch
               ? emit_update(r, on, s, it, global_microbatch(r, Op::kBwd, s, m),
                             range(r, Op::kBwd, s, m), ids[ra.iteration].bwd[s][m], true)
               : emit_update(r, on, s, it, 0, {r * replica_batch_, (r + 1) * replica_batch_},
                             ids[ra.iteration].bwd[s][m], true);
  }

  // Replica r's OPTIM of stage s on `device` over `samples`, after the BWD `bwd`: with
  // replicas (of the pipeline or of the stage) through an ALLREDUCE of the stage's
  // gradients (else none, -1).
  Update emit_update(int32_t r, int32_t device, int32_t s, int32_t it, int32_t microbatch,
                     SampleRange samples, int32_t bwd, bool optim_waits_for_bwd) {
    Instruction update;
    update.device = device;
    update.stage = s;
    update.microbatch = microbatch;
    update.range = samples;
    update.iteration = it;
    int32_t allreduce = -1;
    if (layout_.replicas * stage_replicas_.replicas(s) * copies(s) > 1 &&
        layout_.costs[s].gradient_bytes > 0) {
      Instruction reduce = update;
      reduce.op = Op::kAllreduce;
      reduce.bytes = layout_.costs[s].gradient_bytes;
      allreduce = builder_.add(reduce);
      builder_.add_dependency(allreduce, bwd);
    }
    update.op = Op::kOptim;
    update.compute_s = layout_.costs[s].optim_s;
    const int32_t optim = builder_.add(update);
    if (allreduce >= 0) {
      builder_.add_dependency(optim, allreduce);
    } else if (optim_waits_for_bwd) {
      builder_.add_dependency(optim, bwd);
    }
    return {allreduce, optim};
  }

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
    const SampleRange mine = ranges(a.op, a.stage)[a.microbatch];
    const int32_t upstream = fwd ? a.stage - 1 : a.stage + 1;  // who feeds this action
    if (upstream >= 0 && upstream < num_stages_) {
      const auto& theirs = ranges(a.op, upstream);
      const auto [first, last] = overlapping(theirs, mine);
      for (int32_t k = first; k < last; ++k) {
        consume(r, produced[upstream][k], self, upstream, k, a, theirs[k].intersect(mine), it);
      }
    }
    if (!fwd) {  // the backward needs its own stage's forward of the same samples
      const auto [first, last] = overlapping(layout_.fwd_ranges[a.stage], mine);
      for (int32_t k = first; k < last; ++k) builder_.add_dependency(self, ids.fwd[a.stage][k]);
    }
    const int32_t downstream = fwd ? a.stage + 1 : a.stage - 1;  // who this action feeds
    if (downstream >= 0 && downstream < num_stages_) {
      const auto& theirs = ranges(a.op, downstream);
      const auto [first, last] = overlapping(theirs, mine);
      for (int32_t j = first; j < last; ++j) {
        produce(r, self, a, downstream, j, theirs[j].intersect(mine), it);
      }
    }
  }

  // A FWD, BWD or (asynchronous runs) OPTIM of one device's compute lane, in lane order,
  // with its instruction id.
  struct Step {
    ComputeAction action;
    int32_t iteration = 0;
    int32_t id = 0;
  };

  // One copy to or from host memory, with where it goes on the copy lane: after the step
  // at `position` of the device's compute lane (copies out before copies back there).
  struct Copy {
    int32_t position = 0;
    bool back = false;     // RELOAD(_WEIGHTS), else OFFLOAD(_WEIGHTS)
    bool weights = false;  // a stashed weight version, else (part of) a FWD's stash
    int32_t rank = 0;      // offloads: forward or update order; reloads: backward order
    int32_t stage = 0;
    int32_t iteration = 0;
    int32_t microbatch = 0;       // activations: the forward microbatch; weights: the version
    int32_t pair = 0;             // the offload and its reload share it
    std::vector<int32_t> after;   // compute ids it waits for
    std::vector<int32_t> before;  // compute ids that wait for it
    bool operator<(const Copy& o) const {
      return std::tie(position, back, weights, rank, stage) <
             std::tie(o.position, o.back, o.weights, o.rank, o.stage);
    }
  };

  // Replica r's copies of one iteration (synchronous schedules: its compute order).
  void emit_offload(int32_t r, const ComputeIds& ids, int32_t it) {
    for (const auto& actions : order_) {
      std::vector<Step> steps;
      for (const ComputeAction& a : actions) {
        steps.push_back({a, it, ids_of(ids, a.op)[a.stage][a.microbatch]});
      }
      emit_copies(r, steps);
    }
  }

  // Where a reload of what the stage's backward at `rank` (in `order`, the stage's BWD
  // positions in lane order) needs is issued: when the backward h places earlier starts,
  // i.e. the compute op before it ends, so that it copies while h backwards run.
  int32_t reload_trigger(const std::vector<int32_t>& order, int32_t rank) const {
    return order[std::max(rank - layout_.prefetch_horizon, 0)] - 1;
  }

  // The copies of one device's compute lane (`steps`, in lane order, over one iteration
  // or, for asynchronous runs, all of them with their OPTIMs).
  void emit_copies(int32_t r, const std::vector<Step>& steps) {
    std::map<int32_t, std::vector<int32_t>> backwards;  // stage -> positions, in lane order
    for (int32_t p = 0; p < static_cast<int32_t>(steps.size()); ++p) {
      if (steps[p].action.op == Op::kBwd) backwards[steps[p].action.stage].push_back(p);
    }
    std::vector<Copy> copies;
    activation_copies(steps, backwards, copies);
    if (!layout_.offload_weight_stashes.empty()) weight_copies(steps, backwards, copies);
    std::sort(copies.begin(), copies.end());
    std::map<int32_t, int32_t> offload_id;  // pair -> instruction
    for (const Copy& c : copies) {
      Instruction copy;
      copy.op = c.weights ? (c.back ? Op::kReloadWeights : Op::kOffloadWeights)
                          : (c.back ? Op::kReload : Op::kOffload);
      copy.device = stage_base(r, c.stage);  // offload is refused with replicated stages
      copy.stage = c.stage;
      copy.iteration = c.iteration;
      const StageCost& cost = layout_.costs[c.stage];
      if (c.weights) {
        copy.microbatch = c.microbatch;
        copy.range = {r * replica_batch_, (r + 1) * replica_batch_};
        copy.bytes = cost.weight_bytes;
      } else {
        copy.microbatch = global_microbatch(r, Op::kFwd, c.stage, c.microbatch);
        copy.range = range(r, Op::kFwd, c.stage, c.microbatch);
        copy.bytes = std::llround(layout_.offload_fraction[c.stage] * cost.stash_bytes_per_sample *
                                  copy.range.size());
      }
      const int32_t id = builder_.add(copy);
      if (c.back) {
        builder_.add_dependency(id, offload_id.at(c.pair));
      } else {
        offload_id[c.pair] = id;
      }
      for (int32_t compute : c.after) builder_.add_dependency(id, compute);
      for (int32_t compute : c.before) builder_.add_dependency(compute, id);
    }
  }

  // An OFFLOAD after each offloaded forward, its RELOAD triggered h backwards of the stage
  // ahead of the first that needs it.
  void activation_copies(const std::vector<Step>& steps,
                         const std::map<int32_t, std::vector<int32_t>>& backwards,
                         std::vector<Copy>& copies) {
    std::map<int32_t, int32_t> forwards_seen;  // stage -> forwards so far
    for (int32_t p = 0; p < static_cast<int32_t>(steps.size()); ++p) {
      const ComputeAction& a = steps[p].action;
      if (a.op != Op::kFwd) continue;
      const int32_t s = a.stage;
      const int32_t rank = forwards_seen[s]++;
      const auto found = backwards.find(s);
      if (layout_.offload_fraction[s] <= 0 || found == backwards.end()) continue;
      const std::vector<int32_t>& order = found->second;
      const SampleRange samples = ranges(Op::kFwd, s)[a.microbatch];
      Copy out;
      out.position = p;
      out.rank = rank;
      out.stage = s;
      out.iteration = steps[p].iteration;
      out.microbatch = a.microbatch;
      out.pair = next_pair_++;
      out.after = {steps[p].id};
      Copy back = out;
      back.back = true;
      back.after.clear();
      back.rank = static_cast<int32_t>(order.size());
      for (int32_t k = 0; k < static_cast<int32_t>(order.size()); ++k) {
        const Step& bwd = steps[order[k]];
        if (bwd.iteration != out.iteration ||
            !ranges(Op::kBwd, s)[bwd.action.microbatch].overlaps(samples)) {
          continue;
        }
        back.rank = std::min(back.rank, k);
        back.before.push_back(bwd.id);
      }
      if (back.before.empty()) continue;
      const int32_t trigger = reload_trigger(order, back.rank);
      // A stash whose reload would be due before its offload even starts stays on the
      // device: the round trip would only delay its backward.
      if (trigger <= out.position) continue;
      back.after = {steps[trigger].id};
      back.position = trigger;
      copies.push_back(out);
      copies.push_back(back);
    }
  }

  // Asynchronous pipelines: before each OPTIM of an offloading stage, the version it
  // overwrites goes to host memory when a later BWD still needs it (the copy starts once
  // the previous OPTIM has made that version); it comes back h backwards ahead of the
  // first such BWD, and no earlier than the OPTIM's end.
  void weight_copies(const std::vector<Step>& steps,
                     const std::map<int32_t, std::vector<int32_t>>& backwards,
                     std::vector<Copy>& copies) {
    std::map<std::tuple<int32_t, int32_t, int32_t>, int32_t> version_of;  // (s, it, fwd)
    std::map<int32_t, int32_t> updates;                                   // stage -> so far
    std::vector<int32_t> version(steps.size(), -1);  // per BWD step: its forward's version
    for (int32_t p = 0; p < static_cast<int32_t>(steps.size()); ++p) {
      const ComputeAction& a = steps[p].action;
      const auto key = std::make_tuple(a.stage, steps[p].iteration, a.microbatch);
      if (a.op == Op::kFwd) version_of[key] = updates[a.stage];
      if (a.op == Op::kBwd) version[p] = version_of.at(key);
      if (a.op == Op::kOptim) ++updates[a.stage];
    }
    std::map<int32_t, int32_t> previous_optim;  // stage -> position of its last OPTIM
    std::map<int32_t, int32_t> seen;            // stage -> OPTIMs so far
    for (int32_t p = 0; p < static_cast<int32_t>(steps.size()); ++p) {
      const ComputeAction& a = steps[p].action;
      if (a.op != Op::kOptim) continue;
      const int32_t s = a.stage;
      const int32_t overwritten = seen[s]++;
      const auto last = previous_optim.find(s);
      const int32_t made_at = last == previous_optim.end() ? -1 : last->second;
      previous_optim[s] = p;
      const auto found = backwards.find(s);
      if (!layout_.offload_weight_stashes[s] || found == backwards.end()) continue;
      const std::vector<int32_t>& order = found->second;
      Copy back;
      back.back = back.weights = true;
      back.rank = static_cast<int32_t>(order.size());
      for (int32_t k = 0; k < static_cast<int32_t>(order.size()); ++k) {
        if (order[k] <= p || version[order[k]] != overwritten) continue;
        back.rank = std::min(back.rank, k);
        back.before.push_back(steps[order[k]].id);
      }
      if (back.before.empty()) continue;  // no BWD after the update needs this version
      Copy out;
      out.weights = true;
      out.position = made_at;
      out.rank = overwritten;
      out.stage = back.stage = s;
      out.iteration = back.iteration = steps[p].iteration;
      out.microbatch = back.microbatch = overwritten;
      out.pair = back.pair = next_pair_++;
      if (made_at >= 0) out.after = {steps[made_at].id};
      out.before = {steps[p].id};
      back.position = std::max(reload_trigger(order, back.rank), p);
      back.after = {steps[back.position].id};
      copies.push_back(out);
      copies.push_back(back);
    }
  }

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

  Instruction transfer(Op op, int32_t from, int32_t to, int32_t stage, int32_t microbatch,
                       SampleRange piece, int32_t cut_stage, int32_t it) const {
    Instruction t;
    t.op = op;
    t.device = from;
    t.peer_device = to;
    t.stage = stage;
    t.microbatch = microbatch;
    t.range = piece;
    t.iteration = it;
    const bool useless_gradient =
        (op == Op::kSendGrad || op == Op::kRecvGrad) && !layout_.costs[cut_stage].trains;
    t.bytes = useless_gradient
                  ? 0
                  : std::llround(layout_.costs[cut_stage].output_bytes_per_sample * piece.size());
    return t;
  }

  void consume(int32_t r, int32_t producer, int32_t self, int32_t upstream, int32_t k,
               const ComputeAction& a, SampleRange piece, int32_t it) {
    const int32_t from = device(r, upstream, it, k);
    const int32_t to = device(r, a.stage, it, a.microbatch);
    if (from == to) {
      builder_.add_dependency(self, producer);
      return;
    }
    const bool fwd = a.op == Op::kFwd;
    const int32_t cut = fwd ? upstream : a.stage;  // the stage whose output crosses
    const SampleRange samples = {piece.lo + r * replica_batch_, piece.hi + r * replica_batch_};
    Receive receive{transfer(fwd ? Op::kRecvAct : Op::kRecvGrad, to, from, a.stage,
                             global_microbatch(r, a.op, upstream, k), samples, cut, it),
                    self, Key{it, r, direction(a.op), upstream, k, a.microbatch}};
    if (produced_at_.empty()) return emit(receive);
    // Posted in production order, once the whole iteration is known.
    deferred_.emplace_back(produced_at_.at({direction(a.op), upstream, k}), std::move(receive));
  }

  // A RECV, the compute op that consumes it, and its transfer's key.
  struct Receive {
    Instruction recv;
    int32_t consumer;
    Key key;
  };

  void emit(const Receive& receive) {
    const int32_t recv = builder_.add(receive.recv);
    builder_.add_dependency(receive.consumer, recv);
    match(receive.key, recv, /*is_send=*/false);
  }

  void emit_deferred_receives() {
    std::stable_sort(deferred_.begin(), deferred_.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
    for (const auto& [time, receive] : deferred_) emit(receive);
    deferred_.clear();
  }

  // Transfers and the production times: a forward's activations or a backward's input
  // gradient, whether or not the backward is split.
  static Op direction(Op op) { return op == Op::kFwd ? Op::kFwd : Op::kBwd; }

  void produce(int32_t r, int32_t self, const ComputeAction& a, int32_t downstream, int32_t j,
               SampleRange piece, int32_t it) {
    const int32_t from = device(r, a.stage, it, a.microbatch);
    const int32_t to = device(r, downstream, it, j);
    if (from == to) return;  // consume() adds the plain dependency
    const bool fwd = a.op == Op::kFwd;
    const int32_t cut = fwd ? a.stage : downstream;
    const SampleRange samples = {piece.lo + r * replica_batch_, piece.hi + r * replica_batch_};
    const int32_t send =
        builder_.add(transfer(fwd ? Op::kSendAct : Op::kSendGrad, from, to, a.stage,
                              global_microbatch(r, a.op, a.stage, a.microbatch), samples, cut, it));
    builder_.add_dependency(send, self);
    match(Key{it, r, direction(a.op), a.stage, a.microbatch, j}, send, /*is_send=*/true);
  }

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

  const PipelineLayout& layout_;
  const ComputeOrder& order_;
  int32_t iterations_;
  int32_t num_stages_;
  int32_t replica_batch_;
  StageReplicas stage_replicas_;
  bool run_wide_;
  ProgramBuilder builder_;
  std::unordered_map<Key, int32_t, KeyHash> open_;  // transfers whose other end is not emitted yet
  int32_t next_pair_ = 0;                           // copies: offload and reload pairs
  // With production times: (direction, stage, microbatch) -> when its output is ready, and
  // the iteration's RECVs waiting to be posted in that order.
  std::map<std::tuple<Op, int32_t, int32_t>, double> produced_at_;
  std::vector<std::pair<double, Receive>> deferred_;
};

}  // namespace

std::vector<int32_t> stage_devices(const PipelineLayout& layout, int32_t stage) {
  const int32_t replicas = layout.stage_replicas.empty() ? 1 : layout.stage_replicas[stage];
  std::vector<int32_t> devices;
  for (int32_t r = 0; r < layout.replicas; ++r) {
    for (int32_t k = 0; k < replicas; ++k) {
      devices.push_back(layout.stage_device[stage] + r * layout.devices_per_replica + k);
    }
  }
  return devices;
}

Program lower(const PipelineLayout& layout, const ComputeOrder& order, int32_t iterations,
              const ProductionTimes& production_times) {
  return Lowering(layout, order, iterations, /*run_wide=*/false, production_times).run();
}

Program lower_run(const PipelineLayout& layout, const RunOrder& run, int32_t iterations,
                  bool update_every_microbatch) {
  const ComputeOrder none;
  return Lowering(layout, none, iterations, /*run_wide=*/true)
      .run_over_iterations(run, update_every_microbatch);
}

}  // namespace pipetwin
