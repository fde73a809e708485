// Spawns `nproc` ranks of this very binary on 127.0.0.1 (a free port), with the
// environment a launcher like torchrun would give them (and PIPETWIN_NCCL_PORT, a second
// free port for NCCL's bootstrap), and waits for them. A rank that
// fails or a job that outlives `timeout_s` takes the others down: no process is left.
//
// How a rank starts: loading LibTorch and the CUDA libraries costs a process about 1.2 s, so
// where it is safe a rank is a fork of the launcher that calls the rank entry (the command
// line's main, set_rank_entry) with its own environment, as Python's multiprocessing "fork"
// does; it reuses the libraries already loaded. Safe means: the launch asked for it
// (RankStart::kFork: the CPU ranks, whose launcher has touched no device), an entry is set,
// and the launcher has one thread (a fork keeps only the calling thread, and a thread pool or
// a device runtime started before would be unusable in the child). Otherwise, or with
// PIPETWIN_RANKS_EXEC=1 in the environment, each rank execs this binary afresh.
#pragma once

#include <string>
#include <vector>

namespace pipetwin {

struct LaunchResult {
  int exit_code = 0;    // rank 0's, or the first failing rank's
  std::string failure;  // "rank 1 exited with code 1", "timed out after 60 s", ...
};

enum class RankStart {
  kExec,  // every rank execs this binary (the CUDA replay: a device runtime must start fresh)
  kFork,  // a fork that calls the rank entry, where safe (above); an exec otherwise
};

// What a forked rank runs: the command line's main, given the rank's command line.
using RankEntry = int (*)(int argc, char** argv);
void set_rank_entry(RankEntry entry);

// `argv` is the command line each rank runs (argv[0] is replaced by this executable).
LaunchResult launch_local_ranks(const std::vector<std::string>& argv, int nproc, double timeout_s,
                                RankStart start);

// launch_local_ranks, with a failure thrown as the CLI reports it: InputError when a rank
// rejected its input (exit 2), RuntimeFailure otherwise.
void launch_local_ranks_or_throw(const std::vector<std::string>& argv, int nproc, double timeout_s,
                                 RankStart start);

// Runs `argv` (a command line of this binary; argv[0] is replaced) in one child process
// started as a rank is (a fork that calls the rank entry where safe, else an exec), but with
// no rank environment, so that it may launch ranks of its own; its standard output goes to
// standard error. Waits for it and throws as launch_local_ranks_or_throw does when it fails.
void run_own_command_or_throw(const std::vector<std::string>& argv);

// The number of threads this process runs now (from /proc; 0 when it cannot be read).
int running_threads();

// A TCP port on 127.0.0.1 that was free a moment ago.
int free_local_port();

}  // namespace pipetwin
