// --repeat R: the whole run launched R times on this machine, each repetition's rank 0
// reporting into a directory of its own; the run of median makespan is the one to report
// (analysis/noise_control.h), the others give the spread.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "analysis/noise_control.h"
#include "backend/common/local_launcher.h"

namespace pipetwin {

// What a repetition's rank 0 leaves in its directory (besides its report).
constexpr const char* kRepeatTimeline = "timeline";
constexpr const char* kRepeatFreezeLog = "freeze_log";
// The flag that hands a repetition's rank 0 its directory.
constexpr const char* kRepeatOutputFlag = "--repeat-output";

// Launches `argv` (plus kRepeatOutputFlag DIR) `repeat` times with `nproc` local ranks and
// calls `chosen` with the median run's directory, while it exists, and the summary.
void repeat_local_runs(const std::vector<std::string>& argv, int nproc, double timeout_s,
                       RankStart start, int repeat,
                       const std::function<void(const std::filesystem::path& run_directory,
                                                const RepeatSummary& summary)>& chosen);

// A file of a repetition's directory, whole; throws RuntimeFailure when it cannot be read.
std::string read_text_file(const std::filesystem::path& path);

}  // namespace pipetwin
