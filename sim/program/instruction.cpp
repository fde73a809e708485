#include "sim/program/instruction.h"

namespace pipetwin {

const char* op_name(Op op) {
  switch (op) {
    case Op::kFwd:
      return "FWD";
    case Op::kBwd:
      return "BWD";
    case Op::kBwdInput:
      return "BWD_INPUT";
    case Op::kBwdWeight:
      return "BWD_WEIGHT";
    case Op::kSendAct:
      return "SEND_ACT";
    case Op::kRecvAct:
      return "RECV_ACT";
    case Op::kSendGrad:
      return "SEND_GRAD";
    case Op::kRecvGrad:
      return "RECV_GRAD";
    case Op::kOptim:
      return "OPTIM";
    case Op::kAllreduce:
      return "ALLREDUCE";
    case Op::kAllToAll:
      return "ALL_TO_ALL";
    case Op::kReduceScatter:
      return "REDUCE_SCATTER";
    case Op::kAllGather:
      return "ALL_GATHER";
    case Op::kOffload:
      return "OFFLOAD";
    case Op::kReload:
      return "RELOAD";
    case Op::kSendStash:
      return "SEND_STASH";
    case Op::kRecvStash:
      return "RECV_STASH";
    case Op::kSendWeights:
      return "SEND_WEIGHTS";
    case Op::kRecvWeights:
      return "RECV_WEIGHTS";
    case Op::kMigrate:
      return "MIGRATE";
    case Op::kMigrateRecv:
      return "MIGRATE_RECV";
    case Op::kOffloadWeights:
      return "OFFLOAD_WEIGHTS";
    case Op::kReloadWeights:
      return "RELOAD_WEIGHTS";
  }
  return "?";
}

Op partner_op(Op op) {
  switch (op) {
    case Op::kSendAct:
      return Op::kRecvAct;
    case Op::kRecvAct:
      return Op::kSendAct;
    case Op::kSendGrad:
      return Op::kRecvGrad;
    case Op::kRecvGrad:
      return Op::kSendGrad;
    case Op::kSendStash:
      return Op::kRecvStash;
    case Op::kRecvStash:
      return Op::kSendStash;
    case Op::kSendWeights:
      return Op::kRecvWeights;
    case Op::kRecvWeights:
      return Op::kSendWeights;
    case Op::kMigrate:
      return Op::kMigrateRecv;
    case Op::kMigrateRecv:
      return Op::kMigrate;
    default:
      return op;
  }
}

const char* lane_name(Lane lane) {
  switch (lane) {
    case Lane::kCompute:
      return "compute";
    case Lane::kSend:
      return "send";
    case Lane::kRecv:
      return "recv";
    case Lane::kCopy:
      return "copy";
    case Lane::kCollective:
      return "collective";
    case Lane::kDataParallel:
      return "data-parallel";
  }
  return "?";
}

Lane lane_of(Op op) {
  if (is_send(op)) return Lane::kSend;
  if (is_recv(op)) return Lane::kRecv;
  if (is_collective(op)) return Lane::kCollective;
  if (is_copy(op)) return Lane::kCopy;
  return Lane::kCompute;
}

namespace {

const char* short_op(Op op) {
  switch (op) {
    case Op::kFwd:
      return "F";
    case Op::kBwd:
      return "B";
    case Op::kBwdInput:  // PyTorch pipelining's BACKWARD_INPUT and BACKWARD_WEIGHT
      return "I";
    case Op::kBwdWeight:
      return "W";
    case Op::kSendAct:
      return "SEND_A";
    case Op::kRecvAct:
      return "RECV_A";
    case Op::kSendGrad:
      return "SEND_G";
    case Op::kRecvGrad:
      return "RECV_G";
    case Op::kOptim:
      return "OPT";
    case Op::kAllreduce:
      return "AR";
    case Op::kAllToAll:  // "2A2A5": stage 2's all-to-alls of microbatch 5
      return "A2A";
    case Op::kReduceScatter:  // "1RS3": stage 1's gradients of microbatch 3 (ZeRO)
      return "RS";
    case Op::kAllGather:  // "1AG3": stage 1's weights for a pass of microbatch 3 (ZeRO-3)
      return "AG";
    case Op::kOffload:
      return "OFFLOAD";
    case Op::kReload:
      return "RELOAD";
    case Op::kSendStash:
      return "SEND_S";
    case Op::kRecvStash:
      return "RECV_S";
    case Op::kSendWeights:
      return "SEND_W";
    case Op::kRecvWeights:
      return "RECV_W";
    case Op::kMigrate:
      return "MIGRATE";
    case Op::kMigrateRecv:
      return "MIGRATE_RECV";
    case Op::kOffloadWeights:
      return "OFFLOAD_W";
    case Op::kReloadWeights:
      return "RELOAD_W";
  }
  return "?";
}

}  // namespace

std::string instruction_text(const Instruction& instr, bool show_range) {
  std::string text = std::to_string(instr.stage) + short_op(instr.op);
  if (instr.op == Op::kOptim || instr.op == Op::kAllreduce || instr.op == Op::kSendWeights ||
      instr.op == Op::kRecvWeights || instr.op == Op::kMigrate || instr.op == Op::kMigrateRecv) {
    return text;
  }
  if (show_range) {
    text += '[';
    text += std::to_string(instr.range.lo);
    text += ',';
    text += std::to_string(instr.range.hi);
    text += ')';
  } else {
    text += std::to_string(instr.microbatch);
  }
  return text;
}

}  // namespace pipetwin
