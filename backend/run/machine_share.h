// How the ranks of a measured run shared the machine: what a reader needs to judge its
// times (ranks per core, threads per rank, pinned or not).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "backend/common/rank_environment.h"
#include "traces/timeline.h"

namespace pipetwin {

struct MachineShare {
  int ranks = 0;
  int cores = 0;                              // as rank 0's process may use them
  std::optional<int> torch_threads_per_rank;  // none on the CUDA replay
  std::vector<std::string> lanes;             // one host thread each, on every rank
  bool pinned = false;                        // --pin: each rank on one core
};

// The share of a run of `backend` ("torch" or "cuda") whose rank 0 made `timeline`.
MachineShare machine_share(const std::string& backend, const RankEnvironment& env,
                           const Timeline& timeline, bool pinned);

nlohmann::json machine_json(const MachineShare& machine);
// One line: "machine   2 ranks on 8 cores; ...".
void print_machine(std::ostream& out, const MachineShare& machine);

}  // namespace pipetwin
