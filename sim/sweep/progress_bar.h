// A one-line progress bar for long sweeps, "[#####.....] 12/40 points", redrawn in place.
// Only for people watching a terminal: when stderr is not a TTY (tests, CI, a log file)
// it prints nothing, so captured output stays clean.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>

namespace pipetwin {

// The bar for `done` of `total`, `width` cells wide (no \r, no newline).
std::string render_progress(size_t done, size_t total, size_t width = 30);

class ProgressBar {
 public:
  // Draws on `out` only when `enabled`; use stderr_is_terminal() for the usual choice.
  ProgressBar(std::ostream& out, size_t total, bool enabled);
  ~ProgressBar();  // clears the line if still shown

  void update(size_t done);
  // Blanks the line and returns the cursor to its start, so later output starts clean.
  void clear();

  static bool stderr_is_terminal();

 private:
  std::ostream& out_;
  size_t total_;
  bool enabled_;
  size_t shown_ = 0;  // characters currently on the line
};

}  // namespace pipetwin
