// Spawns `nproc` ranks of this very binary on 127.0.0.1 (a free port), with the
// environment a launcher like torchrun would give them (and PIPETWIN_NCCL_PORT, a second
// free port for NCCL's bootstrap), and waits for them. A rank that
// fails or a job that outlives `timeout_s` takes the others down: no process is left.
#pragma once

#include <string>
#include <vector>

namespace pipetwin {

struct LaunchResult {
  int exit_code = 0;    // rank 0's, or the first failing rank's
  std::string failure;  // "rank 1 exited with code 1", "timed out after 60 s", ...
};

// `argv` is the command line each rank runs (argv[0] is replaced by this executable).
LaunchResult launch_local_ranks(const std::vector<std::string>& argv, int nproc, double timeout_s);

// launch_local_ranks, with a failure thrown as the CLI reports it: InputError when a rank
// rejected its input (exit 2), RuntimeFailure otherwise.
void launch_local_ranks_or_throw(const std::vector<std::string>& argv, int nproc, double timeout_s);

// A TCP port on 127.0.0.1 that was free a moment ago.
int free_local_port();

}  // namespace pipetwin
