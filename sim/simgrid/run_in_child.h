// SimGrid allows one engine per process. The simgrid executor therefore runs each
// simulation in a forked child and sends the result back through a pipe: callers (the
// CLI, sweeps, tests running many scenarios) can simulate as often as they like, and a
// crash inside SimGrid becomes an error message instead of taking the caller down.
#pragma once

#include <functional>
#include <string>

namespace pipetwin {

// Runs `work` in a child process and returns the bytes it returned. An InputError or
// RuntimeFailure thrown in the child is rethrown here with its message; a child that
// dies is reported as a RuntimeFailure.
std::string run_in_child(const std::function<std::string()>& work);

}  // namespace pipetwin
