// What lowering's passes share (lowering.h): where each stage's microbatches run and which
// samples they cover, read off the PipelineLayout, and what the compute pass hands the
// later passes: the ids of the compute instructions, each device's compute lane, and the
// weight updates it placed.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "sim/program/instruction.h"
#include "sim/schedule/compute_order.h"
#include "sim/schedule/lowering.h"
#include "sim/spec/stage_replicas.h"

namespace pipetwin {

class LoweringContext {
 public:
  // `run_wide`: replicated stages number microbatches over the run (lower_run), not per
  // iteration (lower).
  LoweringContext(const PipelineLayout& layout, bool run_wide);

  const PipelineLayout& layout() const { return layout_; }
  int32_t num_stages() const { return num_stages_; }
  const StageReplicas& stage_replicas() const { return stage_replicas_; }

  // Where replica `replica` of the pipeline runs `stage` (its first device when the stage
  // is replicated).
  int32_t stage_base(int32_t replica, int32_t stage) const {
    return layout_.stage_device[stage] + replica * layout_.devices_per_replica;
  }
  // Which of the stage's replicas owns its microbatch m of iteration it: round robin.
  int32_t stage_replica(int32_t stage, int32_t it, int32_t m) const;
  int32_t device(int32_t replica, int32_t stage, int32_t it, int32_t m) const {
    return stage_base(replica, stage) + stage_replica(stage, it, m);
  }
  // A replicated stage's PipeDream update closes a round of r consecutive microbatches,
  // which may span two iterations: all its members carry the iteration of the round's first.
  int32_t update_iteration(int32_t stage, int32_t it, int32_t m,
                           bool update_every_microbatch) const;

  // The stage's forward (op kFwd) or backward (any other op) ranges of replica 0.
  const std::vector<SampleRange>& ranges(Op op, int32_t stage) const {
    return op == Op::kFwd ? layout_.fwd_ranges[stage] : layout_.bwd_ranges[stage];
  }
  int32_t count(Op op, int32_t stage) const {
    return static_cast<int32_t>(ranges(op, stage).size());
  }
  // Range and global microbatch index of replica r's m-th range.
  SampleRange range(int32_t replica, Op op, int32_t stage, int32_t m) const {
    const SampleRange local = ranges(op, stage)[m];
    return {local.lo + replica * replica_batch_, local.hi + replica * replica_batch_};
  }
  int32_t global_microbatch(int32_t replica, Op op, int32_t stage, int32_t m) const {
    return m + replica * count(op, stage);
  }
  // The whole slice of the batch that a data-parallel replica trains on.
  SampleRange replica_samples(int32_t replica) const {
    return {replica * replica_batch_, (replica + 1) * replica_batch_};
  }
  // Shifts a range of replica 0 onto replica r's slice.
  SampleRange on_replica(int32_t replica, SampleRange r) const {
    return {r.lo + replica * replica_batch_, r.hi + replica * replica_batch_};
  }

  int32_t model_stage(int32_t s) const {
    return layout_.model_stage.empty() ? s : layout_.model_stage[s];
  }
  // How many stages hold stage s's weights (DualPipe: two).
  int32_t copies(int32_t s) const;

 private:
  const PipelineLayout& layout_;
  int32_t num_stages_;
  int32_t replica_batch_;
  StageReplicas stage_replicas_;
  bool run_wide_;
};

// Compute instruction ids of one replica and iteration: [stage][microbatch]. `bwd` holds
// the BWDs, or of split backwards the BWD_INPUTs, and `bwd_weight` their BWD_WEIGHTs.
struct ComputeIds {
  std::vector<std::vector<int32_t>> fwd, bwd, bwd_weight;
  // [stage][replica of the stage], in compute order: the last op the update waits for, BWD
  // or BWD_WEIGHT.
  std::vector<std::vector<int32_t>> last_bwd;

  // The table of an op's ids.
  std::vector<std::vector<int32_t>>& of(Op op) {
    return op == Op::kFwd ? fwd : op == Op::kBwdWeight ? bwd_weight : bwd;
  }
  const std::vector<std::vector<int32_t>>& of(Op op) const {
    return op == Op::kFwd ? fwd : op == Op::kBwdWeight ? bwd_weight : bwd;
  }
};

// A FWD, BWD or OPTIM of one device's compute lane, with its instruction id.
struct Step {
  ComputeAction action;
  int32_t iteration = 0;
  int32_t id = 0;
};

// One device's compute lane, or the part of it one iteration runs, as the later passes
// walk it.
struct LaneSteps {
  int32_t replica = 0;  // of the pipeline
  // The receives of one round are posted together (by production time, when the schedule
  // gives one): an iteration of one replica (lower), or a replica's whole run (lower_run).
  int32_t round = 0;
  std::vector<Step> steps;  // in lane order
};

// A weight update that the compute pass placed on a compute lane, and what the update pass
// wires it to.
struct UpdateSlot {
  int32_t optim = -1;       // the OPTIM's id
  Instruction instruction;  // the OPTIM (its ALLREDUCE covers the same samples)
  int32_t gradients = -1;   // the BWD or BWD_WEIGHT whose gradients it applies
  // Whether the OPTIM waits for it explicitly; a synchronous update needs not, lane order
  // puts it after the device's last backward of the stage.
  bool waits_for_gradients = false;
  // ALLREDUCEs of equal keys form one collective; collectives are formed in key order.
  std::pair<int32_t, int32_t> collective;
};

struct LoweredCompute {
  std::vector<std::vector<ComputeIds>> ids;  // [replica][iteration]
  std::vector<LaneSteps> lanes;              // in the order the passes visit them
  std::vector<UpdateSlot> updates;           // in the order their collectives are issued
};

}  // namespace pipetwin
