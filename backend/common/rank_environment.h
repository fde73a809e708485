// What a rank learns from its environment, as torchrun, srun or mpirun set it (or the
// local launcher): shared by every real backend, torch-free.
#pragma once

#include <string>

namespace pipetwin {

// RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT, LOCAL_RANK.
struct RankEnvironment {
  int rank = 0;
  int world_size = 1;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  int local_rank = 0;
};

// True when RANK is set: this process is one rank of a launched job.
bool launched_as_rank();
// Reads and checks the variables; throws InputError naming the variable at fault.
RankEnvironment rank_environment();

// The cores this process may run on (its affinity mask; the hardware's when unknown).
int allowed_cores();

}  // namespace pipetwin
