#include "sim/sweep/progress_bar.h"

#include <unistd.h>

#include <algorithm>

namespace pipetwin {

std::string render_progress(size_t done, size_t total, size_t width) {
  done = std::min(done, total);
  const size_t filled = total == 0 ? width : done * width / total;
  // Appended piece by piece: GCC 12 warns (-Wrestrict, falsely) on "[" + std::string(...).
  std::string bar = "[";
  bar.append(filled, '#').append(width - filled, '.').append("] ");
  bar.append(std::to_string(done)).append("/").append(std::to_string(total)).append(" points");
  return bar;
}

ProgressBar::ProgressBar(std::ostream& out, size_t total, bool enabled)
    : out_(out), total_(total), enabled_(enabled) {}

ProgressBar::~ProgressBar() { clear(); }

void ProgressBar::update(size_t done) {
  if (!enabled_) return;
  const std::string line = render_progress(done, total_);
  out_ << "\r" << line << std::flush;
  shown_ = line.size();
}

void ProgressBar::clear() {
  if (!enabled_ || shown_ == 0) return;
  out_ << "\r" << std::string(shown_, ' ') << "\r" << std::flush;
  shown_ = 0;
}

bool ProgressBar::stderr_is_terminal() { return isatty(STDERR_FILENO) == 1; }

}  // namespace pipetwin
