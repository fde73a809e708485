// What `sweep` prints and writes: a table for people, a JSON array for scripts, and a CSV
// with the same rows at full precision.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "sim/sweep/sweep_row.h"

namespace pipetwin {

// One column per varied path (headed by the path), then iteration time, throughput,
// bubble, peak memory (GiB) and the status: ok, OUT OF MEMORY, or "error: " + message.
void print_sweep_table(std::ostream& out, const std::vector<std::string>& paths,
                       const std::vector<SweepRow>& rows);

// [{point: {path: value}, iteration_time_s, throughput_samples_per_s, bubble_ratio,
//   peak_memory_bytes, out_of_memory, status, error_kind, error}]; the metrics are null for
// a point that failed.
nlohmann::json sweep_json(const std::vector<SweepRow>& rows);

// Header, then one line per row: the paths' values, then the metrics unrounded in seconds
// and bytes (empty for a failed point), out_of_memory, status, error_kind, error. Fields
// are quoted as RFC 4180 says when they hold a comma, a quote or a line break.
void write_sweep_csv(std::ostream& out, const std::vector<std::string>& paths,
                     const std::vector<SweepRow>& rows);

}  // namespace pipetwin
