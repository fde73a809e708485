#include "sim/chakra/chakra_collectives.h"

namespace pipetwin {

ChakraProtoMsg::CollectiveCommType comm_type(Op collective) {
  switch (collective) {
    case Op::kAllToAll:
      return ChakraProtoMsg::ALL_TO_ALL;
    case Op::kReduceScatter:
      return ChakraProtoMsg::REDUCE_SCATTER;
    case Op::kAllGather:
      return ChakraProtoMsg::ALL_GATHER;
    default:
      return ChakraProtoMsg::ALL_REDUCE;
  }
}

bool collective_op(int64_t comm_type, Op& op) {
  switch (comm_type) {
    case ChakraProtoMsg::ALL_REDUCE:
      op = Op::kAllreduce;
      return true;
    case ChakraProtoMsg::ALL_TO_ALL:
      op = Op::kAllToAll;
      return true;
    case ChakraProtoMsg::REDUCE_SCATTER:
      op = Op::kReduceScatter;
      return true;
    case ChakraProtoMsg::ALL_GATHER:
      op = Op::kAllGather;
      return true;
    default:
      return false;
  }
}

}  // namespace pipetwin
