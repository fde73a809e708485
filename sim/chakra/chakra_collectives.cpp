#include "sim/chakra/chakra_collectives.h"

#include <utility>

namespace pipetwin {
namespace {

// One mapping, read both ways.
constexpr std::pair<Op, ChakraProtoMsg::CollectiveCommType> kCollectives[] = {
    {Op::kAllreduce, ChakraProtoMsg::ALL_REDUCE},
    {Op::kAllToAll, ChakraProtoMsg::ALL_TO_ALL},
    {Op::kReduceScatter, ChakraProtoMsg::REDUCE_SCATTER},
    {Op::kAllGather, ChakraProtoMsg::ALL_GATHER},
};

}  // namespace

ChakraProtoMsg::CollectiveCommType comm_type(Op collective) {
  for (const auto& [op, type] : kCollectives) {
    if (op == collective) return type;
  }
  return ChakraProtoMsg::ALL_REDUCE;
}

bool collective_op(int64_t comm_type, Op& op) {
  for (const auto& [known, type] : kCollectives) {
    if (type == comm_type) {
      op = known;
      return true;
    }
  }
  return false;
}

}  // namespace pipetwin
