// A Program: per (device, lane), an ordered instruction list, plus the data dependencies
// that lane order does not imply and the SEND<->RECV pairing (docs/schedules.md).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "sim/program/instruction.h"
#include "sim/spec/expert_dispatch.h"

namespace pipetwin {

// What a collective group stands for, where the expansions onto several GPUs per device
// (sim/schedule/context_parallel.h, tensor_parallel.h) treat it apart: MoE parallel folding
// puts GPUs of different context- and tensor-parallel ranks in one expert group.
enum class GroupKind : uint8_t {
  kPlain,
  kExpertExchange,   // an expert group's all-to-alls
  kExpertGradients,  // the reduction of routed experts' gradients over the GPUs holding them
};

struct Program {
  int32_t num_devices = 0;
  int32_t num_stages = 0;
  int32_t iterations = 1;
  int32_t global_batch = 0;
  // True when some stage cuts the minibatch unevenly or differently from another;
  // then text forms show ranges instead of microbatch indices.
  bool show_ranges = false;
  // GPUs per stage (tensor parallelism): devices t + T d, t < T, run the same ops.
  int32_t tensor_parallel = 1;
  // GPUs that split each sequence (context parallelism): devices t + T (c + C d), c < C, run
  // the same ops on their part of it.
  int32_t context_parallel = 1;

  // Instructions grouped by lane: lane L = device * kLaneCount + lane holds
  // instructions [lane_begin[L], lane_begin[L + 1]) in execution order.
  std::vector<Instruction> instructions;
  std::vector<int32_t> lane_begin;
  // Data dependencies of instruction i: deps[dep_begin[i] .. dep_begin[i + 1]).
  std::vector<int32_t> dep_begin;
  std::vector<int32_t> deps;
  // The reverse: instructions that list i as a dependency.
  std::vector<int32_t> dependent_begin;
  std::vector<int32_t> dependents;
  // The matching RECV of a SEND and vice versa; -1 for other ops.
  std::vector<int32_t> partner;
  // Collectives: the group of instruction i (-1 for none); group g's members are
  // group_members[group_begin[g] .. group_begin[g + 1]), one per participating device.
  // All members start together, when the last is ready, and end together.
  std::vector<int32_t> group;
  std::vector<int32_t> group_begin;
  std::vector<int32_t> group_members;
  std::vector<GroupKind> group_kind;  // per group
  // How the groups of GroupKind::kExpertExchange move their tokens.
  ExpertDispatch expert_dispatch;
  // Resident bytes per device: weights, gradients, optimizer state of its stages.
  std::vector<int64_t> static_bytes;
  // Device each stage runs on (with replicated stages, its first replica's).
  std::vector<int32_t> stage_device;
  // Replicated stages (schedule.stage_replicas): per stage, the devices that run it,
  // stage_device[s] onwards; empty when every stage runs on one device.
  std::vector<int32_t> stage_replicas;
  // Per stage, the model stage whose layers and weights it holds: DualPipe runs each model
  // stage twice, once per direction, and the two copies all-reduce their gradients. Empty
  // when stage s is model stage s.
  std::vector<int32_t> model_stage;

  int32_t size() const { return static_cast<int32_t>(instructions.size()); }
  std::span<const int32_t> deps_of(int32_t i) const {
    return {deps.data() + dep_begin[i], deps.data() + dep_begin[i + 1]};
  }
  std::span<const int32_t> members_of_group(int32_t g) const {
    return {group_members.data() + group_begin[g], group_members.data() + group_begin[g + 1]};
  }
  int32_t model_stage_of(int32_t stage) const {
    return model_stage.empty() ? stage : model_stage[stage];
  }
  int32_t num_groups() const { return static_cast<int32_t>(group_begin.size()) - 1; }
  GroupKind kind_of_group(int32_t g) const { return group_kind[g]; }
  std::span<const int32_t> dependents_of(int32_t i) const {
    return {dependents.data() + dependent_begin[i], dependents.data() + dependent_begin[i + 1]};
  }
  int32_t lane_index(int32_t i) const {
    return instructions[i].device * kLaneCount + static_cast<int>(instructions[i].lane());
  }

  std::string text(int32_t i) const;
  // "1SEND_A3 (gpu1 send lane, position 4, iteration 0)": for error messages.
  std::string describe(int32_t i) const;
};

// Collects instructions in any order, each appended to its lane's end, and freezes
// them into a Program with lanes contiguous. Ids returned by add() are builder ids;
// finish() renumbers them.
class ProgramBuilder {
 public:
  ProgramBuilder(int32_t num_devices, int32_t num_stages, int32_t iterations, int32_t global_batch);

  // Room for this many instructions and dependencies, when the caller knows about how many
  // (the lowering does): the tables then grow without copying.
  void reserve(int64_t instructions, int64_t dependencies);
  int32_t add(const Instruction& instr);
  void add_dependency(int32_t instr, int32_t depends_on);
  void pair(int32_t send, int32_t recv);
  // Makes `members` one collective (e.g. the ALLREDUCE of a stage across replicas).
  void group(const std::vector<int32_t>& members, GroupKind kind = GroupKind::kPlain);
  void set_static_bytes(std::vector<int64_t> bytes) { static_bytes_ = std::move(bytes); }
  void set_stage_device(std::vector<int32_t> devices) { stage_device_ = std::move(devices); }
  void set_stage_replicas(std::vector<int32_t> counts) { stage_replicas_ = std::move(counts); }
  void set_model_stage(std::vector<int32_t> stages) { model_stage_ = std::move(stages); }
  void set_show_ranges(bool show) { show_ranges_ = show; }
  void set_tensor_parallel(int32_t gpus_per_stage) { tensor_parallel_ = gpus_per_stage; }
  void set_context_parallel(int32_t gpus) { context_parallel_ = gpus; }

  Program finish() &&;

 private:
  Program program_;
  std::vector<Instruction> pending_;
  std::vector<std::pair<int32_t, int32_t>> edges_;  // (instr, depends_on)
  std::vector<int32_t> partner_;
  std::vector<std::vector<int32_t>> groups_;
  std::vector<GroupKind> group_kinds_;
  std::vector<int64_t> static_bytes_;
  std::vector<int32_t> stage_device_;
  std::vector<int32_t> stage_replicas_;
  std::vector<int32_t> model_stage_;
  bool show_ranges_ = false;
  int32_t tensor_parallel_ = 1;
  int32_t context_parallel_ = 1;
};

}  // namespace pipetwin
