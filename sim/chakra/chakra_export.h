// A Program as Chakra execution traces, one per device (rank), for ASTRA-sim and Chakra's
// tools (docs/chakra.md). Each instruction becomes one node: FWD, BWD (and its split
// halves) and OPTIM are COMP_NODEs with duration_micros; SEND_* and RECV_* are
// COMM_SEND_NODE / COMM_RECV_NODE with comm_src, comm_dst, comm_size and a comm_tag shared
// by the pair; ALLREDUCE is a COMM_COLL_NODE (comm_type ALL_REDUCE) whose pg_name names its
// devices' group; OFFLOAD and RELOAD are MEM_STORE_NODE / MEM_LOAD_NODE with tensor_size.
// data_deps are the Program's dependencies within the device, ctrl_deps the lane order.
// Attributes named pipetwin_* carry what the Chakra schema has no field for (exact seconds,
// stage, sample range, dependencies across devices), so that the traces read back into the
// same Program (chakra_import.h).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/chakra/chakra_stream.h"
#include "sim/program/program.h"

namespace pipetwin {

// Where the Program came from, recorded in every file's GlobalMetadata so that
// `simulate --chakra` can find the cluster it ran on.
struct ChakraSource {
  std::string scenario_name;
  std::string scenario_source;  // a path or builtin:NAME
  std::vector<std::string> overrides;
};

struct ChakraWorkload {
  std::vector<ChakraRankTrace> ranks;  // rank r: device r's instructions
  // pg_name -> the ranks of that process group (ASTRA-sim's comm group file).
  std::map<int32_t, std::vector<int32_t>> comm_groups;
};

inline constexpr const char* kChakraPrefix = "pipetwin";

// An order of all instructions in which each comes after its dependencies, its lane
// predecessor and (a RECV) its SEND, smallest index first among the ready; nullopt when they
// form a cycle. Each rank's file lists its nodes in this order, so that a reader meets every
// node after the nodes it depends on.
std::optional<std::vector<int32_t>> topological_order(const Program& program);

ChakraWorkload chakra_workload(const Program& program, const ChakraSource& source);

// DIR/pipetwin.RANK.et for every rank and DIR/comm_group.json, each written whole or not at
// all; DIR is created when missing. Throws RuntimeFailure when a file cannot be written.
void write_chakra_workload(const ChakraWorkload& workload, const std::string& dir);

}  // namespace pipetwin
