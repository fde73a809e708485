// `pipetwin run` on real ranks, all but the printing: which of the run modes applies (the
// single-process reference, the local launch of the ranks once or --repeat times, a rank's
// FreezePipe training run, a rank's run of one Program), the checks before any rank is
// spawned, core pinning, the freeze log. What is reported goes to a RealRunReporter.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "analysis/noise_control.h"
#include "backend/common/real_backend.h"
#include "backend/run/run_plan.h"
#include "sim/scenario/loaded_scenario.h"

namespace pipetwin {

struct RealRunRequest {
  std::string backend = "torch";  // "torch" or "cuda" ("gloo": torch, with a note)
  int nproc = 0;                  // ranks to spawn locally; 0: one per device
  bool reference = false;         // train in one process without a pipeline instead
  int32_t warmup = 1;
  bool warmup_given = false;  // --warmup on the command line (FreezePipe refuses it)
  int repeat = 1;
  bool pin = false;
  std::string freeze_log;  // where to write the measured gradients' freeze log ("": none)
  int32_t freeze_interval = 0;
  // Set by the parent of a --repeat run: rank 0 reports into this directory.
  std::string repeat_output;
  RealRunOptions options;
};

// Where what was measured is reported: rank 0 of the job, or the parent of --repeat.
class RealRunReporter {
 public:
  virtual ~RealRunReporter() = default;
  // --reference: the training in one process (warm-up iterations included).
  virtual void reference(const MeasuredRun& run, int32_t warmup) = 0;
  // Rank 0's merged run of plan.run_program.
  virtual void program_run(const RealBackend& backend, const RunPlan& plan,
                           const RankEnvironment& env, const MeasuredRun& run) = 0;
  // Rank 0's FreezePipe training run (MeasuredRun::freezing).
  virtual void training_run(const RealBackend& backend, const RankEnvironment& env,
                            const MeasuredRun& run) = 0;
  // The parent of --repeat: the median run's directory (kRepeatTimeline and the report
  // its rank 0 wrote there) and the spread of all.
  virtual void repeated(const std::filesystem::path& run_directory,
                        const RepeatSummary& summary) = 0;
};

// Runs `setup` (loaded from `loaded`) as `request` asks, on the backend of that name among
// `built` (backend/run/built_backends.h: this binary's). `argv` is this command line,
// which the local ranks run again. Throws InputError or RuntimeFailure in one line.
void drive_real_run(const RealRunRequest& request, const BuiltBackends& built,
                    const LoadedScenario& loaded, const ResolvedScenario& setup,
                    const std::vector<std::string>& argv, RealRunReporter& reporter);

// `argv` with the value of its --backend option replaced by `backend` (the ranks and
// repetitions need not resolve the name, nor print its note, again).
std::vector<std::string> with_backend_argument(std::vector<std::string> argv,
                                               const std::string& backend);

}  // namespace pipetwin
