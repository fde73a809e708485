// What the libFuzzer harnesses share: the errors a parser may raise on bad input (anything
// else escaping is a finding), an in-memory file for readers that take a path, and the one
// pipeline a scenario goes through in `pipetwin simulate` (docs/reliability.md).
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "sim/driver/resource_limits.h"
#include "sim/scenario/loaded_scenario.h"
#include "sim/scenario/resolve_scenario.h"
#include "sim/spec/errors.h"

namespace pipetwin::fuzz {

// Small enough that one input never takes more than a fraction of a second or a few hundred
// MiB of the 2 GiB a harness runs under; the scenarios shipped in scenarios/ fit.
inline ResourceLimits fuzz_limits() {
  ResourceLimits limits;
  limits.max_instructions = 200'000;
  limits.max_memory_bytes = 256.0 * 1024 * 1024;
  return limits;
}

// Runs `body`; the errors pipetwin reports to the user (exit codes 1 and 2) end the input,
// anything else propagates and libFuzzer reports it as a crash (uncaught exception).
template <typename Body>
void expect_only_reported_errors(Body&& body) {
  try {
    body();
  } catch (const InputError&) {
  } catch (const RuntimeFailure&) {
  }
}

// Same, for the trace readers, whose contract is std::runtime_error (reading) and
// std::invalid_argument (a Timeline the Chrome writer cannot represent).
template <typename Body>
void expect_only_reader_errors(Body&& body) {
  try {
    body();
  } catch (const std::runtime_error&) {
  } catch (const std::invalid_argument&) {
  }
}

// A file that lives in memory, for readers that take a path: /proc/self/fd/N.
class MemoryFile {
 public:
  MemoryFile() : fd_(memfd_create("pipetwin-fuzz", 0)) {
    if (fd_ < 0) {
      std::perror("memfd_create");
      std::abort();
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;
  ~MemoryFile() { close(fd_); }

  // Replaces the content; the next open of path() reads exactly these bytes.
  void set(const uint8_t* data, size_t size) {
    if (ftruncate(fd_, 0) != 0) std::abort();
    size_t done = 0;
    while (done < size) {
      const ssize_t n = pwrite(fd_, data + done, size - done, static_cast<off_t>(done));
      if (n <= 0) std::abort();
      done += static_cast<size_t>(n);
    }
  }
  const std::string& path() const { return path_; }

 private:
  int fd_;
  std::string path_;
};

// A fuzzed scenario may name any file; only the embedded profiles (relative paths, looked up
// among the built-in files) and the harness's own MemoryFile are read, never the machine's
// files (/dev/zero would be an endless read, not a finding).
inline bool reads_only_embedded_files(const proto::Scenario& scenario, const std::string& allowed) {
  const auto ok = [&](const std::string& path) {
    return path.empty() || path.front() != '/' || path == allowed;
  };
  return ok(scenario.model().pipedream_profile()) && ok(scenario.freeze().log()) &&
         ok(scenario.cluster().simgrid_platform()) && ok(scenario.model().hf_config());
}

// What `pipetwin simulate` does with a resolved scenario on the analytic engine (FreezePipe's
// whole training run when the scenario freezes), within fuzz_limits(). Defined in
// fuzz_support.cpp.
void simulate_within_limits(const ResolvedScenario& setup);

// parse_scenario (as a built-in scenario, so that relative profile paths find the embedded
// profiles), resolve_scenario, then simulate_within_limits. Errors the user would see end it.
void load_and_simulate(const std::string& text, const std::string& allowed_file = "");

}  // namespace pipetwin::fuzz
