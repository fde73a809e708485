// Runs jobs each in its own forked child process, a bounded number at once, and collects
// what each child sends back through a pipe. A process per job because SimGrid allows one
// engine per process; it also means a job that crashes takes only itself down.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

namespace pipetwin {

struct ChildExit {
  std::string output;   // every byte the child wrote before its pipe closed
  int wait_status = 0;  // as waitpid reports it
  bool exited_cleanly() const;
};

// "exited with status 3", "killed by signal 11 (Segmentation fault)".
std::string describe_child_exit(int wait_status);

// CPUs this process may run on (its affinity mask), at least 1.
int available_cpus();

// Calls job(i) for every i in [0, count), each in a fresh child forked from this process,
// with at most `max_parallel` children alive at once. The string job(i) returns is written
// to the child's pipe; a job that throws sends nothing and exits non-zero. on_done(i, exit)
// runs in this process as each child finishes (completion order, not index order) and
// may not fork. No child outlives this call: if on_done or the pool itself throws, the
// remaining children are killed and reaped before the exception propagates.
// Throws std::system_error when a pipe or process cannot be created.
void run_in_children(size_t count, int max_parallel, const std::function<std::string(size_t)>& job,
                     const std::function<void(size_t, ChildExit)>& on_done);

}  // namespace pipetwin
