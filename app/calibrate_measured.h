// `pipetwin calibrate`'s measurements written into the scenario: what the real backends
// measured (backend/common/real_backend.h, Calibration) becomes the scenario's links and GEMM
// efficiency, each change named in a header comment. The command (cli/calibrate_command.cpp)
// launches the ranks and runs; this is what it makes of their figures.
#pragma once

#include <ostream>
#include <string>

#include "backend/common/real_backend.h"
#include "sim/scenario/loaded_scenario.h"

namespace pipetwin {

// The GPUs as one process measured them (`--backend cuda`): host_link from pinned copies,
// intra_node from NCCL send/recv between GPUs 0 and 1 where two are visible, and the zoo's
// GEMM efficiency (or, with `gemm_curve`, the GPU curve's peak_fraction) from cuBLAS GEMMs
// of the scenario's precision. Prints the measured table and fits on `log`; returns the
// header lines.
std::string apply_gpu_calibration(const Calibration& gpu, bool gemm_curve, LoadedScenario& loaded,
                                  std::ostream& log);

// The link between two LibTorch ranks over Gloo, measured alone and while every rank computes:
// intra_node set to the second (or, with `idle_link`, the first). Prints both; returns the
// header lines.
std::string apply_rank_link(const Calibration& links, bool idle_link, int ranks,
                            LoadedScenario& loaded, std::ostream& log);

}  // namespace pipetwin
