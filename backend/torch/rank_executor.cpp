// One rank of a real run: builds its stages and runs its lanes of the Program through the
// shared lane runner, recording every instruction's start and end. Here: construction, the
// run, the op dispatch and where injected faults strike; each op's work is in the other rank_*.cpp.
#include "backend/torch/rank_executor.h"

#include <exception>
#include <stdexcept>
#include <string>

#include "backend/common/fault_injection.h"
#include "backend/common/program_lanes.h"
#include "backend/torch/clock_alignment.h"
#include "backend/torch/decoder_layers.h"
#include "backend/torch/rank_executor_state.h"
#include "backend/torch/tensor_parallel_layers.h"
#include "sim/driver/build_program.h"
#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

// Each Program stage's layers: the model's stages as the scenario cuts them, DualPipe's
// second copies included.
std::vector<std::pair<int32_t, int32_t>> program_stage_layers(
    const Program& program, const std::vector<std::pair<int32_t, int32_t>>& model_stages) {
  std::vector<std::pair<int32_t, int32_t>> layers;
  for (int32_t s = 0; s < program.num_stages; ++s) {
    layers.push_back(model_stages.at(program.model_stage_of(s)));
  }
  return layers;
}

// Each expert's width split over the tensor-parallel group (ETP = T > 1; with one expert
// group, ETP is T whatever the field says).
bool experts_split(const TrainingSpec& training) {
  return training.tensor_parallel > 1 &&
         (training.expert_parallel == 1 || training.expert_tensor() == training.tensor_parallel);
}

// The experts' folded layout: ETP x E over the tensor- and data-parallel ranks of a stage.
ExpertFolding expert_folding_of(const ResolvedScenario& setup, const Program& program) {
  ExpertFolding folding;
  folding.tensor = setup.training.tensor_parallel;
  folding.expert = setup.training.expert_parallel;
  folding.expert_tensor = setup.training.expert_tensor();
  folding.per_replica = program.num_devices / setup.training.data_parallel;
  return folding;
}

}  // namespace

RankExecutor::RankExecutor(const ResolvedScenario& setup, const Program& program,
                           RankSession& session, RankModel& model, const RealRunOptions& options,
                           const ProgramContext& context)
    : p_(program),
      session_(session),
      model_(model),
      env_(session.env),
      options_(options),
      context_(context),
      arch_(zoo_architecture(*setup.zoo)),
      split_stages_(setup.schedule.kind == proto::PIPEFB),
      devices_per_replica_(program.num_devices / setup.training.data_parallel),
      layers_(program_stage_layers(program, chunk_layer_ranges(setup))),
      task_(arch_, setup.training.global_batch, options.seed),
      activations_(program.size()),
      weights_(is_asynchronous(setup.schedule.kind), model, program.size()),
      collectives_(program, session, model),
      zero_stage_(setup.training.zero_stage),
      wire_(program, *session.job.world) {
  torch::set_num_threads(1);  // ranks share the machine's cores
  // This rank's stages: with replicas and interleaving, whatever the Program puts here.
  for (const Instruction& ins : p_.instructions) {
    if (ins.lane() != Lane::kCompute || ins.device != env_.rank || stages_.count(ins.stage)) {
      continue;
    }
    const int s = ins.stage;
    stages_[s] = model_.stage(layers_[s].first, layers_[s].second);
  }
  if (zero_stage_ > 0) shard_stages(setup.training.optimizer);
  fault_ = injected_fault(env_.rank);
  losses_.assign(p_.iterations, 0.0);
  if (options_.gradient_interval > 0) {
    const int32_t intervals =
        (p_.iterations + options_.gradient_interval - 1) / options_.gradient_interval;
    gradient_norms_.assign(static_cast<size_t>(intervals) * arch_.layers.size(), 0.0);
  }
  times_.start_s.assign(p_.size(), 0.0);
  times_.end_s.assign(p_.size(), 0.0);
}

MeasuredRun RankExecutor::run() {
  collectives_.join_groups();
  clock_base_ = session_.clock_base_s;
  // The shared runner (backend/common/lane_runner.h): compute on this thread; send, recv
  // and collective on their own threads so that communication overlaps compute, as the
  // design's lanes say. An instruction runs once what it waits for on other lanes has
  // finished (this device executes before returning).
  try {
    run_lanes(lane_schedule(p_, env_.rank), *this, options_.timeout_s);
    consolidate_shards();
  } catch (const LaneFailure& f) {
    std::string what = f.what();
    if (f.waited_for >= 0) what += " waiting for " + p_.describe(f.waited_for);
    throw RuntimeFailure("rank " + std::to_string(env_.rank) + " failed at " +
                         p_.describe(f.instruction) + ": " + what);
  }
  return gather(session_.clock_offset_s);
}

void RankExecutor::execute(int32_t i) {
  try {
    const double start = steady_now_s();
    perform(i);
    times_.start_s[i] = start - clock_base_;
    times_.end_s[i] = steady_now_s() - clock_base_;
  } catch (const c10::Error& e) {
    throw std::runtime_error(e.what_without_backtrace());  // backtraces are for torch developers
  }
}

void RankExecutor::perform(int32_t i) {
  const Instruction& ins = p_.instructions[i];
  if (ins.lane() == Lane::kCompute && i - p_.lane_begin[lane_id(Lane::kCompute)] == fault_.before) {
    strike(fault_);  // fault injection for tests (backend/common/fault_injection.h)
  }
  if (is_pass(ins.op)) {
    before_pass(ins);
    perform_pass(i);
    return after_pass(i);
  }
  switch (ins.op) {
    case Op::kSendAct:
    case Op::kSendGrad:
    case Op::kSendStash:
    case Op::kSendWeights:
    case Op::kMigrate:
      return send(i);
    case Op::kRecvAct:
    case Op::kRecvGrad:
    case Op::kRecvStash:
    case Op::kRecvWeights:
    case Op::kMigrateRecv:
      return receive(i);
    case Op::kOptim:
      return update(ins);
    case Op::kAllreduce:
      return collectives_.allreduce(i, stages_.at(ins.stage));
    case Op::kAllToAll:
      // The pass before it exchanged its tokens where its MoE layers needed them
      // (moe_mlp.h): nothing is left to do, and the span is empty.
      return;
    case Op::kReduceScatter:
    case Op::kAllGather:
      // Sequence parallelism's pairs ran inside their pass, as its all-reduces did.
      if (collectives_.ran_inside_pass(i)) return;
      return ins.op == Op::kReduceScatter ? reduce_scatter(i) : all_gather(i);
    default:  // real_run_unsupported turns these schedules away first
      throw RuntimeFailure(std::string("the LibTorch backend does not run ") + op_name(ins.op));
  }
}

void RankExecutor::perform_pass(int32_t i) {
  switch (p_.instructions[i].op) {
    case Op::kFwd:
      return forward(i);
    case Op::kBwd:
      return backward(i);
    case Op::kBwdInput:
      return backward_input(i);
    case Op::kBwdWeight:
      return backward_weight(i);
    default:
      throw std::logic_error(p_.describe(i) + " is not a pass");
  }
}

MeasuredRun execute_on_rank(const ResolvedScenario& setup, const Program& program,
                            RankSession& session, RankModel& model, const RealRunOptions& options,
                            const ProgramContext& context) {
  RankExecutor executor(setup, program, session, model, options, context);
  return executor.run();
}

std::string real_run_unsupported(const ResolvedScenario& setup, const Program& program) {
  if (!setup.zoo) {
    return "the LibTorch backend builds zoo models (model.zoo); explicit layers and profiles "
           "have no architecture to run";
  }
  if (setup.zoo->name() == "transformer") {
    const std::string why = decoder_unsupported(zoo_architecture(*setup.zoo));
    if (!why.empty()) return why;
  }
  if (setup.training.context_parallel > 1) {
    return "real ranks run whole sequences: training.context_parallel is simulated "
           "(pipetwin simulate) and replayed on GPUs (run --backend cuda)";
  }
  if (setup.training.zero_stage > 0 &&
      (setup.training.fsdp_shard_size != 0 ||
       setup.training.fsdp_reshard != proto::Training::AFTER_EACH_PASS)) {
    return "real ranks shard as FSDP does by default: training.fsdp_reshard and "
           "training.fsdp_shard_size are simulated (pipetwin simulate)";
  }
  if (setup.training.expert_parallel > 1 && setup.freeze.enabled) {
    return "real ranks do not freeze layers whose experts are spread over ranks "
           "(training.expert_parallel with freeze)";
  }
  if (setup.schedule.kind == proto::PIPEFB && !setup.schedule.pipefb_recompute) {
    // A backward in another process cannot walk the forward's autograd graph.
    return "PIPEFB on real ranks hands the stage's input to the backward rank, which "
           "recomputes the forward: set schedule.pipefb_recompute: true";
  }
  if (is_asynchronous(setup.schedule.kind) && setup.freeze.enabled) {
    return "asynchronous pipelines on real ranks do not freeze layers (freeze)";
  }
  if (const int32_t tp = setup.training.tensor_parallel; tp > 1) {
    const ZooArchitecture arch = zoo_architecture(*setup.zoo);
    const bool sequence_parallel = setup.training.sequence_parallel;
    const std::string why =
        setup.zoo->name() == "transformer"
            ? decoder_tensor_parallel_unsupported(arch, tp, sequence_parallel,
                                                  experts_split(setup.training))
            : tensor_parallel_unsupported(arch, *setup.zoo, tp, sequence_parallel);
    if (!why.empty()) return why;
  }
  if (setup.freeze.cache_epoch_iterations > 0) {
    return "real ranks run every frozen layer's forward (freeze.autocache); simulate AutoCache "
           "with pipetwin simulate";
  }
  if (setup.schedule.offload.enabled) {
    // LibTorch 1.13's C++ API has no saved-tensor hooks, so the tensors autograd keeps
    // cannot be moved out and back; copying them would leave the originals in place.
    return "the LibTorch backend cannot offload autograd's saved activations (schedule.offload); "
           "simulate offload with pipetwin simulate";
  }
  if (is_zero_bubble(setup.schedule.kind) && setup.training.tensor_parallel > 1) {
    // W re-walks the backward graph, whose tensor-parallel collectives would run again.
    return "zero-bubble schedules on real ranks split the backward of whole layers, not of "
           "tensor-parallel ones (training.tensor_parallel); simulate them with pipetwin simulate";
  }
  if (setup.training.recompute != proto::Training::NONE) {
    return "real ranks keep every block's activations (training.recompute); simulate "
           "recomputation with pipetwin simulate";
  }
  return "";
}

MeasuredRun run_as_rank(const ResolvedScenario& setup, const Program& program,
                        const RankEnvironment& env, const RealRunOptions& options) {
  if (env.world_size != program.num_devices) {
    throw InputError("WORLD_SIZE=" + std::to_string(env.world_size) + " but the schedule needs " +
                     std::to_string(program.num_devices) + " ranks (one per pipeline device)");
  }
  RankSession session = open_session(env, options.timeout_s);
  // Tensor parallelism: this rank's place among its stage's T consecutive ranks, whose
  // group every member joins first, before the Program's groups (which include it).
  TensorParallelGroup tensor_parallel;
  tensor_parallel.size = setup.training.tensor_parallel;
  if (tensor_parallel.splits()) {
    tensor_parallel.rank = env.rank % tensor_parallel.size;
    tensor_parallel.sequence_parallel = setup.training.sequence_parallel;
    tensor_parallel.gloo = &session.group(tensor_parallel_ranks(env.rank, tensor_parallel.size));
  }
  // Expert parallelism: this rank's place in its expert group, folded over the stage's
  // tensor- and data-parallel ranks, joined next by every rank.
  ExpertParallelGroup expert_parallel;
  expert_parallel.size = setup.training.expert_parallel;
  expert_parallel.experts_split = experts_split(setup.training);
  if (expert_parallel.splits()) {
    const ExpertFolding folding = expert_folding_of(setup, program);
    const ExpertPlace place = expert_place(env.rank, folding);
    expert_parallel.rank = place.expert_rank;
    expert_parallel.data_rank = place.expert_data_rank;
    expert_parallel.gloo =
        &session.group(expert_parallel_ranks(env.rank, folding), "expert_parallel");
  }
  RankModel model(zoo_architecture(*setup.zoo), setup.training.optimizer, options.seed,
                  tensor_parallel, expert_parallel);
  return execute_on_rank(setup, program, session, model, options, ProgramContext{});
}

}  // namespace pipetwin
