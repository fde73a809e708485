// The summary of one run that `simulate` and `run` print: a short table for people, one JSON
// object for scripts (the HTML report is report/'s, written by app/run_files.h).
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "analysis/metrics.h"
#include "sim/driver/simulate.h"

namespace pipetwin {

// The --json object: iteration_time_s, training_time_s, throughput_samples_per_s,
// bubble_ratio, devices [{id, busy_s, peak_memory_bytes, ...}], and context.
nlohmann::json run_summary_json(const SimulationResult& result, const RunMetrics& metrics);

void print_run_summary(std::ostream& out, const SimulationResult& result,
                       const RunMetrics& metrics);

// The name of the op at which `device` peaks in memory (empty when the peak is at the start).
std::string peak_memory_op(const SimulationResult& result, int32_t device);

// The first line of the text summary: scenario, schedule, stages, batch, engine.
std::string run_context(const SimulationResult& result);

// The run's headline numbers as the text summary ends with them: (label, value).
std::vector<std::pair<std::string, std::string>> headline_numbers(const RunMetrics& metrics);

}  // namespace pipetwin
