// The parts of a measured run's report that the simulators' report has not: the GPUs'
// figures, measured against modelled activations, a training run's migrations and the
// spread of repeated runs; each as JSON and as text lines.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <vector>

#include "analysis/noise_control.h"
#include "backend/common/measured_run.h"
#include "sim/program/program.h"

namespace pipetwin {

nlohmann::json gpu_json(const GpuFigures& gpu);
// "gpu  H100 ...", a line per rank's memory, and a note when ranks shared a GPU.
void print_gpu(std::ostream& out, const GpuFigures& gpu);

// Per stage: the activation bytes per sample the live tensors held (measured) and what the
// cost model's layers say (the Program's FWD stash).
nlohmann::json stash_comparison(const Program& program, const MeasuredRun& run);

// A model-training FreezePipe run's migrations: the payload bytes sent beside what the
// MIGRATEs count (model_bytes), and their seconds.
nlohmann::json migrations_json(const FreezingFigures& freezing);

// "losses   l0 l1 | l2 ...": the first `warmup` losses before a bar.
void print_losses(std::ostream& out, const std::vector<double>& losses, int32_t warmup);

nlohmann::json repeat_json(const RepeatSummary& summary);
// The repetitions' median, range, IQR and spread, and which run the report shows.
void print_repeat(std::ostream& out, const RepeatSummary& summary);

}  // namespace pipetwin
