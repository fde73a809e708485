// The two kinds of failure a user sees, and the exit codes the CLI maps them to.
#pragma once

#include <stdexcept>
#include <string>

namespace pipetwin {

// Bad input: the message names the file, the line and the field. Exit code 2.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The input was fine but running it failed (out of memory, deadlock). Exit code 1.
class RuntimeFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace pipetwin
