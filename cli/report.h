// What `simulate` prints: a short table for people, one JSON object for scripts.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "analysis/metrics.h"
#include "sim/simulate.h"

namespace pipetwin {

// The --json object: iteration_time_s, training_time_s, throughput_samples_per_s,
// bubble_ratio, devices [{id, busy_s, peak_memory_bytes, ...}], and context.
nlohmann::json report_json(const SimulationResult& result, const RunMetrics& metrics);

void print_report(std::ostream& out, const SimulationResult& result, const RunMetrics& metrics);

// The first line of the text report: scenario, schedule, stages, batch, engine.
std::string run_context(const SimulationResult& result);

// The run's headline numbers as the text report ends with them: (label, value).
std::vector<std::pair<std::string, std::string>> headline_numbers(const RunMetrics& metrics);

// --report of simulate and run: the HTML report of `result` (docs/reports.md), with
// `notes` under the headline.
void write_run_report(const std::string& path, const SimulationResult& result,
                      const RunMetrics& metrics, const std::vector<std::string>& notes = {});

// The HTML report of saved timelines, one run after the other (`pipetwin report`).
void write_timeline_report(const std::string& path, const std::vector<std::string>& names,
                           const std::vector<Timeline>& timelines);

// The --trace and --timeline files of a run (each skipped when its path is empty),
// written whole or not at all.
void write_run_files(const Timeline& timeline, const std::string& trace_path,
                     const std::string& timeline_path);

}  // namespace pipetwin
