// What `simulate` prints: a short table for people, one JSON object for scripts.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "analysis/metrics.h"
#include "sim/simulate.h"

namespace pipetwin {

// The --json object: iteration_time_s, training_time_s, throughput_samples_per_s,
// bubble_ratio, devices [{id, busy_s, peak_memory_bytes, ...}], and context.
nlohmann::json report_json(const SimulationResult& result, const RunMetrics& metrics);

void print_report(std::ostream& out, const SimulationResult& result, const RunMetrics& metrics);

// The --trace and --timeline files of a run (each skipped when its path is empty),
// written whole or not at all.
void write_run_files(const Timeline& timeline, const std::string& trace_path,
                     const std::string& timeline_path);

}  // namespace pipetwin
