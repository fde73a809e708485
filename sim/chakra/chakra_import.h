// Chakra execution traces (one file per rank) read back into a Program that pipetwin's
// engines run (`pipetwin simulate --chakra DIR`, docs/chakra.md). Traces pipetwin wrote
// (chakra_export.h) give back the very Program; others are read by their Chakra fields:
// COMP_NODE -> compute of duration_micros; COMM_SEND_NODE / COMM_RECV_NODE -> a transfer of
// comm_size bytes, paired by (comm_src, comm_dst, comm_tag) in stream order;
// COMM_COLL_NODE with comm_type ALL_REDUCE -> an all-reduce of comm_size bytes, the k-th of
// each pg_name on every rank being one collective; MEM_STORE_NODE / MEM_LOAD_NODE -> a
// copy of tensor_size bytes to host memory and back. Each rank's nodes run in stream order
// per lane (compute, send, recv, copy, collective) after their data_deps and ctrl_deps.
#pragma once

#include <string>
#include <vector>

#include "sim/chakra/chakra_stream.h"
#include "sim/program/program.h"

namespace pipetwin {

struct ChakraProgram {
  Program program;
  // What pipetwin recorded when it wrote the traces (empty for other traces): the scenario
  // whose cluster they ran on.
  std::string scenario_source;
  std::vector<std::string> overrides;
};

// Throws InputError naming the file, the node and the field at fault.
ChakraProgram program_from_chakra(const std::vector<ChakraRankTrace>& ranks);

}  // namespace pipetwin
