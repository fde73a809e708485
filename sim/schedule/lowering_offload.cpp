#include "sim/schedule/lowering_offload.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

namespace pipetwin {
namespace {

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

// Per stage, the positions of its BWDs on one compute lane, in lane order.
using Backwards = std::map<int32_t, std::vector<int32_t>>;

class OffloadPass {
 public:
  OffloadPass(const LoweringContext& context, ProgramBuilder& builder)
      : context_(context), layout_(context.layout()), builder_(builder) {}

  // The copies of one device's compute lane (`steps`, in lane order).
  void place(int32_t r, const std::vector<Step>& steps) {
    Backwards backwards;
    for (int32_t p = 0; p < static_cast<int32_t>(steps.size()); ++p) {
      if (steps[p].action.op == Op::kBwd) backwards[steps[p].action.stage].push_back(p);
    }
    std::vector<Copy> copies;
    activation_copies(steps, backwards, copies);
    if (!layout_.offload_weight_stashes.empty()) weight_copies(steps, backwards, copies);
    std::sort(copies.begin(), copies.end());
    std::map<int32_t, int32_t> offload_id;  // pair -> instruction
    for (const Copy& c : copies) {
      const int32_t id = builder_.add(instruction(r, c));
      if (c.back) {
        builder_.add_dependency(id, offload_id.at(c.pair));
      } else {
        offload_id[c.pair] = id;
      }
      for (int32_t compute : c.after) builder_.add_dependency(id, compute);
      for (int32_t compute : c.before) builder_.add_dependency(compute, id);
    }
  }

 private:
  Instruction instruction(int32_t r, const Copy& c) const {
    Instruction copy;
    copy.op = c.weights ? (c.back ? Op::kReloadWeights : Op::kOffloadWeights)
                        : (c.back ? Op::kReload : Op::kOffload);
    copy.device = context_.stage_base(r, c.stage);  // offload is refused with replicated stages
    copy.stage = c.stage;
    copy.iteration = c.iteration;
    const StageCost& cost = layout_.costs[c.stage];
    if (c.weights) {
      copy.microbatch = c.microbatch;
      copy.range = context_.replica_samples(r);
      copy.bytes = cost.weight_bytes;
    } else {
      copy.microbatch = context_.global_microbatch(r, Op::kFwd, c.stage, c.microbatch);
      copy.range = context_.range(r, Op::kFwd, c.stage, c.microbatch);
      copy.bytes = std::llround(layout_.offload_fraction[c.stage] * cost.stash_bytes_per_sample *
                                copy.range.size());
    }
    return copy;
  }

  // Where a reload of what the stage's backward at `rank` (in `order`, the stage's BWD
  // positions in lane order) needs is issued: when the backward h places earlier starts,
  // i.e. the compute op before it ends, so that it copies while h backwards run.
  int32_t reload_trigger(const std::vector<int32_t>& order, int32_t rank) const {
    return order[std::max(rank - layout_.prefetch_horizon, 0)] - 1;
  }

  // An OFFLOAD after each offloaded forward, its RELOAD triggered h backwards of the stage
  // ahead of the first that needs it.
  void activation_copies(const std::vector<Step>& steps, const Backwards& backwards,
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
      const SampleRange samples = context_.ranges(Op::kFwd, s)[a.microbatch];
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
            !context_.ranges(Op::kBwd, s)[bwd.action.microbatch].overlaps(samples)) {
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
  void weight_copies(const std::vector<Step>& steps, const Backwards& backwards,
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

  const LoweringContext& context_;
  const PipelineLayout& layout_;
  ProgramBuilder& builder_;
  int32_t next_pair_ = 0;  // offload and reload pairs
};

}  // namespace

void add_offload(const LoweringContext& context, const LoweredCompute& compute,
                 ProgramBuilder& builder) {
  if (context.layout().offload_fraction.empty()) return;
  OffloadPass pass(context, builder);
  for (const LaneSteps& lane : compute.lanes) pass.place(lane.replica, lane.steps);
}

}  // namespace pipetwin
