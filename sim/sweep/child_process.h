// What every simulation run in a child process does around fork(2) (the fork pool's workers,
// SimGrid's one run per process): nothing buffered is written twice, and no child outlives
// its parent.
#pragma once

#include <sys/types.h>

#include <cstddef>

namespace pipetwin {

// fork(2) after flushing the C and C++ standard streams (the child gets a copy of their
// buffers). The child is killed when its parent dies (a pool's Reaper, a user's ^C), so no
// simulation runs on as an orphan. Returns as fork does: the child's pid, 0 in the child, -1
// with errno set.
pid_t fork_child();

// Writes all `size` bytes, retrying after interruptions; false when the reader went away.
bool write_all(int fd, const char* data, size_t size);

}  // namespace pipetwin
