// The Program's collective ops as Chakra's CollectiveCommType names them. comm_size is the
// instruction's bytes: the buffer all-reduced or reduce-scattered, the gathered result of an
// all-gather, each member's send buffer of an all-to-all.
#pragma once

#include <cstdint>

#include "et_def.pb.h"
#include "sim/program/instruction.h"

namespace pipetwin {

ChakraProtoMsg::CollectiveCommType comm_type(Op collective);

// The op of a comm_type pipetwin simulates; false for the others (broadcast, ...).
bool collective_op(int64_t comm_type, Op& op);

}  // namespace pipetwin
