#include "sim/simgrid/simulation_progress.h"

#include <algorithm>
#include <cstdio>

#include "sim/sweep/progress_bar.h"

namespace pipetwin {
namespace {

constexpr double kQuietSeconds = 2.0;    // short runs show nothing
constexpr double kRedrawSeconds = 0.25;  // at most four redraws a second
constexpr int64_t kCheckEvery = 1024;    // instructions between looks at the clock

}  // namespace

SimulationProgress::SimulationProgress(int64_t total)
    : total_(total), enabled_(ProgressBar::stderr_is_terminal()), start_(Clock::now()) {}

SimulationProgress::~SimulationProgress() {
  if (shown_ > 0) std::fprintf(stderr, "\r%*s\r", static_cast<int>(shown_), "");
}

void SimulationProgress::update(int64_t done, double simulated_s) {
  if (!enabled_ || done % kCheckEvery != 0 || done <= 0) return;
  const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
  if (elapsed < kQuietSeconds || elapsed - last_drawn_s_ < kRedrawSeconds) return;
  last_drawn_s_ = elapsed;
  const double left = elapsed * static_cast<double>(total_ - done) / static_cast<double>(done);
  char line[160];
  const int length = std::snprintf(
      line, sizeof line, "simgrid: %lld of %lld instructions, %.3f s simulated, %.0f s left",
      static_cast<long long>(done), static_cast<long long>(total_), simulated_s, left);
  const size_t shown = length > 0 ? static_cast<size_t>(length) : 0;
  std::fprintf(stderr, "\r%s%*s", line, static_cast<int>(shown_ > shown ? shown_ - shown : 0), "");
  std::fflush(stderr);
  shown_ = std::max(shown_, shown);
}

}  // namespace pipetwin
