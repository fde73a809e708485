#include "sim/schedule/lowering_compute.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "sim/spec/unequal_plan.h"

namespace pipetwin {
namespace {

ComputeIds empty_ids(const LoweringContext& context) {
  ComputeIds ids;
  const int32_t stages = context.num_stages();
  ids.fwd.resize(stages);
  ids.bwd.resize(stages);
  ids.bwd_weight.resize(stages);
  ids.last_bwd.resize(stages);
  for (int32_t s = 0; s < stages; ++s) {
    ids.last_bwd[s].assign(context.stage_replicas().replicas(s), -1);
    ids.fwd[s].assign(context.count(Op::kFwd, s), -1);
    ids.bwd[s].assign(context.count(Op::kBwd, s), -1);
    ids.bwd_weight[s].assign(context.count(Op::kBwd, s), -1);
  }
  return ids;
}

// What a FWD allocates and a BWD frees; a split backward frees it in two parts, the
// weight gradients' share when BWD_WEIGHT ends and the rest when BWD_INPUT ends. With full
// recomputation W's share is rebuilt by BWD_INPUT and exceeds the checkpoint: BWD_INPUT then
// frees a negative amount (holds more when it ends).
int64_t stash_freed(const StageCost& cost, Op op, int32_t samples) {
  const int64_t whole = std::llround(cost.stash_bytes_per_sample * samples);
  if (op != Op::kBwdInput && op != Op::kBwdWeight) return whole;
  const int64_t weight_share = std::llround(cost.bwd_weight_stash_bytes_per_sample * samples);
  return op == Op::kBwdWeight ? weight_share : whole - weight_share;
}

// Replica r's FWD or backward `a` of iteration `it`, recorded in `ids`.
int32_t add_pass(const LoweringContext& context, int32_t r, const ComputeAction& a, int32_t it,
                 ComputeIds& ids, ProgramBuilder& builder) {
  const SampleRange samples = context.range(r, a.op, a.stage, a.microbatch);
  const StageCost& cost = context.layout().costs[a.stage];
  Instruction instr;
  instr.op = a.op;
  instr.device = context.device(r, a.stage, it, a.microbatch);
  instr.stage = a.stage;
  instr.microbatch = context.global_microbatch(r, a.op, a.stage, a.microbatch);
  instr.range = samples;
  instr.iteration = it;
  const CostCurve& backward = a.op == Op::kBwdInput    ? cost.bwd_input
                              : a.op == Op::kBwdWeight ? cost.bwd_weight
                                                       : cost.bwd;
  // A backward whose samples span several forwards pays each forward's part at its size.
  instr.compute_s = a.op == Op::kFwd ? cost.fwd.seconds(samples.size())
                                     : backward_through_forwards(
                                           context.ranges(Op::kBwd, a.stage)[a.microbatch],
                                           context.ranges(Op::kFwd, a.stage),
                                           [&](int32_t size) { return backward.seconds(size); });
  instr.stash_bytes = stash_freed(cost, a.op, samples.size());
  const int32_t id = builder.add(instr);
  ids.of(a.op)[a.stage][a.microbatch] = id;
  if (computes_weight_gradient(a.op)) {
    ids.last_bwd[a.stage][context.stage_replica(a.stage, it, a.microbatch)] = id;
  }
  return id;
}

// An OPTIM of stage s on `device` over `samples`.
UpdateSlot add_optim(const LoweringContext& context, int32_t device, int32_t s, int32_t it,
                     int32_t microbatch, SampleRange samples, ProgramBuilder& builder) {
  UpdateSlot slot;
  Instruction& update = slot.instruction;
  update.op = Op::kOptim;
  update.device = device;
  update.stage = s;
  update.microbatch = microbatch;
  update.range = samples;
  update.iteration = it;
  update.compute_s = context.layout().costs[s].optim_s;
  slot.optim = builder.add(update);
  return slot;
}

// The updates closing iteration `it`: on every device of every stage, model stage by model
// stage, so that every device's collective lane takes the collectives in one order
// (DualPipe's devices hold a stage of each half of the model, and would otherwise wait for
// each other's second collective). One collective per model stage: over the pipeline's
// replicas, the stage's replicas and DualPipe's two copies of it.
void add_iteration_updates(const LoweringContext& context, int32_t it, LoweredCompute& out,
                           ProgramBuilder& builder) {
  std::vector<int32_t> stages(context.num_stages());
  std::iota(stages.begin(), stages.end(), 0);
  std::stable_sort(stages.begin(), stages.end(), [&](int32_t a, int32_t b) {
    return context.model_stage(a) < context.model_stage(b);
  });
  for (int32_t s : stages) {
    for (int32_t r = 0; r < context.layout().replicas; ++r) {
      for (int32_t k = 0; k < context.stage_replicas().replicas(s); ++k) {
        UpdateSlot slot = add_optim(context, context.stage_base(r, s) + k, s, it, 0,
                                    context.replica_samples(r), builder);
        slot.gradients = out.ids[r][it].last_bwd[s][k];
        slot.collective = {it, context.model_stage(s)};
        out.updates.push_back(slot);
      }
    }
  }
}

}  // namespace

LoweredCompute add_compute(const LoweringContext& context, const ComputeOrder& order,
                           int32_t iterations, ProgramBuilder& builder) {
  const int32_t replicas = context.layout().replicas;
  LoweredCompute out;
  out.ids.assign(replicas, std::vector<ComputeIds>(iterations, empty_ids(context)));
  for (int32_t it = 0; it < iterations; ++it) {
    for (int32_t r = 0; r < replicas; ++r) {
      for (const auto& device_order : order) {
        LaneSteps lane{r, it * replicas + r, {}};
        for (const ComputeAction& a : device_order) {
          lane.steps.push_back({a, it, add_pass(context, r, a, it, out.ids[r][it], builder)});
        }
        out.lanes.push_back(std::move(lane));
      }
    }
    add_iteration_updates(context, it, out, builder);
  }
  return out;
}

LoweredCompute add_compute_run(const LoweringContext& context, const RunOrder& run,
                               int32_t iterations, bool update_every_microbatch,
                               ProgramBuilder& builder) {
  LoweredCompute out;
  out.ids.assign(context.layout().replicas,
                 std::vector<ComputeIds>(iterations, empty_ids(context)));
  for (int32_t r = 0; r < context.layout().replicas; ++r) {
    for (const auto& device_order : run) {
      LaneSteps lane{r, r, {}};
      int32_t updates = 0;  // on this device so far
      for (const RunAction& ra : device_order) {
        const ComputeAction& a = ra.action;
        ComputeIds& ids = out.ids[r][ra.iteration];
        if (a.op != Op::kOptim) {
          lane.steps.push_back(
              {a, ra.iteration, add_pass(context, r, a, ra.iteration, ids, builder)});
          continue;
        }
        const int32_t s = a.stage, m = a.microbatch;
        const int32_t on = context.device(r, s, ra.iteration, m);
        const int32_t it = context.update_iteration(s, ra.iteration, m, update_every_microbatch);
        UpdateSlot slot =
            update_every_microbatch
                ? add_optim(context, on, s, it, context.global_microbatch(r, Op::kBwd, s, m),
                            context.range(r, Op::kBwd, s, m), builder)
                : add_optim(context, on, s, it, 0, context.replica_samples(r), builder);
        slot.gradients = ids.bwd[s][m];
        slot.waits_for_gradients = true;
        // A replicated stage's replicas update together, the n-th update of each.
        slot.collective = {s, updates++};
        out.updates.push_back(slot);
        lane.steps.push_back({a, ra.iteration, slot.optim});
      }
      out.lanes.push_back(std::move(lane));
    }
  }
  return out;
}

}  // namespace pipetwin
